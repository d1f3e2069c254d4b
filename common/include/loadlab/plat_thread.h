/*
 * plat_thread.h - a thread of the agent's own (the fleet loop runs a task
 * on one while it keeps talking to the server). POSIX threads on POSIX;
 * _beginthreadex on Windows, so that the Windows agent needs no
 * winpthread (which imports GetTickCount64, absent from XP).
 *
 *	struct plat_thread *t;
 *	if (plat_thread_start(work, &state, &t) == 0)
 *		plat_thread_join(t);
 */
#ifndef LOADLAB_PLAT_THREAD_H
#define LOADLAB_PLAT_THREAD_H

/* A started thread. Opaque. */
struct plat_thread;

/* Starts a thread running FN(ARG). *RET_THREAD must be given to
 * plat_thread_join(). LL_EIO when the OS refuses. */
int plat_thread_start(void (*fn)(void *arg), void *arg, struct plat_thread **ret_thread);

/* Waits for THREAD to return from its function, then frees it.
 * plat_thread_join(NULL) is fine. */
void plat_thread_join(struct plat_thread *thread);

#endif
