#pragma once
// Linux APIs the database driver uses that Glibc's Swift module does not export: epoll, which its event loop waits
// on, and naming a thread.
#include <sys/epoll.h>
#include <sys/prctl.h>

// Names the calling thread as top, perf and /proc show it (the kernel keeps 15 bytes). prctl is variadic, which
// Swift cannot call, hence the wrapper.
static inline int crema_name_current_thread(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}
