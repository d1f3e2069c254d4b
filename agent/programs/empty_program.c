/*
 * empty_program.c - the program family's floor: a program that loads
 * nothing of its own and exits at once, timed the same way as the
 * user's program (agent/family/program/program_measure.c). Embedded in
 * loadlab-agent; compiled with mingw-w64 on the lab machine.
 */
int main(void)
{
	return 0;
}
