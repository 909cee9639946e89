/* Preloaded into `crema serve` under valgrind by bench/ingest.sh -i, and only there.
 *
 * Valgrind 3.19 writes into the signal mask a program hands to sigsuspend (it edits the mask in place before the
 * system call). libdispatch's signal thread, which a Swift program's main thread becomes, passes a `static const`
 * mask (`_dispatch_sigsuspend`), in read-only memory: the write faults (SEGV_ACCERR) and valgrind dies of its own
 * SIGSEGV a few seconds after start. This sigsuspend hands the kernel a copy on the stack instead: the same mask,
 * the same call, writable memory. */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

int sigsuspend(const sigset_t *mask) {
    sigset_t copy = *mask;
    return (int)syscall(SYS_rt_sigsuspend, &copy, _NSIG / 8);
}
