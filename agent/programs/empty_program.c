/*
 * empty_program.c - the program family's floor: a program that loads
 * nothing of its own and exits at once, timed the same way as the
 * user's program (agent/family/program/program_measure.c). Compiled with
 * mingw-w64 when loadlab-agent is built, and shipped inside it.
 */
int main(void)
{
	return 0;
}
