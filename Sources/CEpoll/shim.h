#pragma once
// Linux's readiness API, which Glibc's Swift module does not export: the database driver's event loop waits on it.
#include <sys/epoll.h>
