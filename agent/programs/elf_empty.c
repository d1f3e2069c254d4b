/*
 * elf_empty.c - the floor of the program family's ELF programs: a
 * dynamically linked program that loads nothing but the C library and
 * exits at once, timed the same way as the user's program. Compiled with
 * the host's cc when loadlab-agent is built on Linux, shipped inside it.
 */
int main(void)
{
	return 0;
}
