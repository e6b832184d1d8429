/*
 * CCurlewLinux: the Linux system calls Glibc's Swift module does not export (epoll, eventfd),
 * for the run-loop backend's epoll socket strategy and for tests that count threads and fds and read
 * the heap (malloc_trim, mallinfo2).
 */
#ifndef CCURLEW_LINUX_H
#define CCURLEW_LINUX_H

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <malloc.h>

static inline int ccurlew_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

static const unsigned int CCURLEW_EPOLLIN = EPOLLIN;
static const unsigned int CCURLEW_EPOLLOUT = EPOLLOUT;
static const unsigned int CCURLEW_EPOLLERR = EPOLLERR;
static const unsigned int CCURLEW_EPOLLHUP = EPOLLHUP;
static const int CCURLEW_EPOLL_CTL_ADD = EPOLL_CTL_ADD;
static const int CCURLEW_EPOLL_CTL_MOD = EPOLL_CTL_MOD;
static const int CCURLEW_EPOLL_CTL_DEL = EPOLL_CTL_DEL;

/* ---- Run-loop backend (CurlewRunLoop) ---- */

/* The kernel thread id of the calling thread (glibc's gettid() needs _GNU_SOURCE, which Swift's Glibc lacks). */
static inline int ccurlew_gettid(void) { return (int)syscall(SYS_gettid); }

/* Names the calling thread (PR_SET_NAME; the kernel keeps the first 15 bytes). Returns 0 or -1. */
static inline int ccurlew_set_current_thread_name(const char *_Nonnull name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}

/* One ready event, flattened for Swift: its 64-bit user data (the run-loop backend packs a
   registration token beside the fd) and its event bits. */
typedef struct { unsigned long long data; unsigned int events; } ccurlew_epoll_event;

/* Adds, modifies or deletes fd in epfd with these event bits and user data. */
static inline int ccurlew_epoll_ctl(int epfd, int op, int fd, unsigned int events, unsigned long long data) {
    struct epoll_event ev;
    ev.events = events;
    ev.data.u64 = data;
    return epoll_ctl(epfd, op, fd, &ev);
}

/* Waits up to timeout_ms (0: poll) and copies at most max (<= 64) events into out. */
static inline int ccurlew_epoll_wait(int epfd, ccurlew_epoll_event *_Nonnull out, int max, int timeout_ms) {
    struct epoll_event events[64];
    if (max > 64) max = 64;
    int n = epoll_wait(epfd, events, max, timeout_ms);
    for (int i = 0; i < n; i++) { out[i].data = events[i].data.u64; out[i].events = events[i].events; }
    return n;
}

#endif
