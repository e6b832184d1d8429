/*
 * bench-curl-c: the floor for any curl-based client ("curl-c").
 *
 * One thread runs libcurl's multi-socket API with its own event loop, the same event shape as
 * Curlew's backends: an epoll set holds curl's sockets with exactly the directions curl asks for
 * (CURLMOPT_SOCKETFUNCTION), a timerfd is curl's one timer (CURLMOPT_TIMERFUNCTION), re-armed only
 * when curl wants it earlier, as Curlew's engine does, and every event is passed on with
 * curl_multi_socket_action and the CURL_CSELECT_* bits that fired.
 * C easy handles are created once and recycled (remove, re-add), so connections stay in the multi
 * handle's pool and are reused; each completion re-adds its handle at once (a closed loop).
 * Response bodies are copied into a per-handle buffer that grows once and is then reused; in `stream`
 * the write callback only counts them (the floor of reading a body chunk by chunk and dropping it).
 *
 * Same command line and result JSON as the Swift clients (BenchKit's BenchOptions and
 * ClientResult); latency percentiles are exact (every latency is kept and sorted).
 *
 * `lateness`: this client has a single thread, so its "main thread" is the curl loop itself. A
 * one-shot 1 ms timerfd in the same epoll set is re-armed after each tick, and its lateness (the
 * time it was handled minus the time it was armed for) is recorded, like BenchKit's main-thread
 * ticker.
 *
 * Threads: 1, unless libcurl starts resolver threads (not for a numeric host). /proc/self/task is
 * counted whenever the loop wakes, at most every 10 ms, so the count costs no extra wake-up.
 */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define CLIENT_NAME "curl-c"
#define MAX_EVENTS 64
#define IDLE_SETTLE_NS 250000000ull /* BenchOptions.idleSettleSeconds */
#define DRAIN_TIMEOUT_NS 10000000000ull
#define TICK_NS 1000000ull
#define SAMPLE_INTERVAL_NS 10000000ull
#define IMMEDIATE_ROUNDS 8 /* MultiDriver.immediateRoundsPerEntry */

/* ---------------------------------------------------------------------------------------------- */
/* Options                                                                                          */

enum scenario { SCENARIO_GET, SCENARIO_POST, SCENARIO_H2, SCENARIO_IDLE, SCENARIO_LATENESS, SCENARIO_STREAM };
static const char *const scenario_names[] = {"get", "post", "h2", "idle", "lateness", "stream"};
#define SCENARIO_COUNT (sizeof scenario_names / sizeof scenario_names[0])

struct options {
    const char *client;
    const char *url;
    enum scenario scenario;
    long concurrency;
    long connections; /* per host; the concurrency unless --connections */
    long requests;    /* -1: bounded by the duration only */
    double duration;  /* seconds; < 0: bounded by the request count only */
    long warmup;
    long body_bytes;
    const char *ca_file;
};

static void usage_error(const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    fputs("error: ", stderr);
    vfprintf(stderr, format, arguments);
    fputs("\nusage: --client NAME --url URL --scenario get|stream|post|h2|idle|lateness --concurrency C "
          "[--connections K] [--requests N] [--duration-seconds S] [--warmup-requests W] [--body-bytes B] "
          "[--ca-file PATH]\n",
          stderr);
    va_end(arguments);
    exit(2);
}

static long parse_long(const char *flag, const char *text, long minimum) {
    char *end = NULL;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || value < minimum)
        usage_error("%s must be an integer >= %ld, not \"%s\"", flag, minimum, text);
    return value;
}

/* The same rules as BenchOptions.parse. */
static struct options parse_options(int argc, char **argv) {
    struct options options = {NULL, NULL, SCENARIO_GET, -1, -1, -1, -1.0, -1, 1024, NULL};
    const char *scenario = NULL;
    const char *concurrency = NULL, *connections = NULL, *requests = NULL, *duration = NULL, *warmup = NULL, *body = NULL;
    for (int index = 1; index < argc; index += 2) {
        const char *flag = argv[index];
        if (index + 1 >= argc) usage_error("%s needs a value", flag);
        const char *value = argv[index + 1];
        if (strcmp(flag, "--client") == 0) options.client = value;
        else if (strcmp(flag, "--url") == 0) options.url = value;
        else if (strcmp(flag, "--scenario") == 0) scenario = value;
        else if (strcmp(flag, "--concurrency") == 0) concurrency = value;
        else if (strcmp(flag, "--connections") == 0) connections = value;
        else if (strcmp(flag, "--requests") == 0) requests = value;
        else if (strcmp(flag, "--duration-seconds") == 0) duration = value;
        else if (strcmp(flag, "--warmup-requests") == 0) warmup = value;
        else if (strcmp(flag, "--body-bytes") == 0) body = value;
        else if (strcmp(flag, "--ca-file") == 0) options.ca_file = value;
        else usage_error("unknown argument \"%s\"", flag);
    }
    if (options.client == NULL || options.client[0] == '\0') usage_error("missing --client");
    if (options.url == NULL || options.url[0] == '\0') usage_error("missing --url");
    if (scenario == NULL) usage_error("missing --scenario");
    int known = 0;
    for (size_t index = 0; index < SCENARIO_COUNT; index++) {
        if (strcmp(scenario, scenario_names[index]) == 0) {
            options.scenario = (enum scenario)index;
            known = 1;
        }
    }
    if (!known) usage_error("unknown scenario \"%s\" (get, stream, post, h2, idle, lateness)", scenario);
    if (concurrency == NULL) usage_error("missing --concurrency");
    options.concurrency = parse_long("--concurrency", concurrency, 1);
    options.connections = connections != NULL ? parse_long("--connections", connections, 1) : options.concurrency;
    if (requests != NULL) options.requests = parse_long("--requests", requests, 1);
    if (duration != NULL) {
        char *end = NULL;
        options.duration = strtod(duration, &end);
        if (end == duration || *end != '\0' || !(options.duration > 0) || options.duration > 1e9)
            usage_error("--duration-seconds must be a positive number, not \"%s\"", duration);
    }
    if (options.requests < 0 && options.duration < 0) {
        if (options.scenario == SCENARIO_IDLE) options.duration = 5;
        else options.requests = 10000;
    }
    if (warmup != NULL) options.warmup = parse_long("--warmup-requests", warmup, 0);
    else if (options.scenario == SCENARIO_IDLE) options.warmup = 0;
    else if (options.requests > 0) options.warmup = options.requests / 10 < 1000 ? options.requests / 10 : 1000;
    else options.warmup = 1000;
    if (body != NULL) options.body_bytes = parse_long("--body-bytes", body, 0);
    if (strcmp(options.client, CLIENT_NAME) != 0)
        usage_error("unknown client \"%s\" (this binary has: " CLIENT_NAME ")", options.client);
    return options;
}

/* ---------------------------------------------------------------------------------------------- */
/* Clocks, samples, process figures                                                                 */

static uint64_t now_ns(void) {
    struct timespec spec;
    clock_gettime(CLOCK_MONOTONIC, &spec);
    return (uint64_t)spec.tv_sec * 1000000000ull + (uint64_t)spec.tv_nsec;
}

/* A growable array of microsecond samples; percentiles are exact (nearest rank after sorting). */
struct samples {
    uint64_t *values;
    size_t count;
    size_t capacity;
};

static void samples_add(struct samples *samples, uint64_t value) {
    if (samples->count == samples->capacity) {
        size_t capacity = samples->capacity ? samples->capacity * 2 : 65536;
        uint64_t *values = realloc(samples->values, capacity * sizeof *values);
        if (values == NULL) return; /* out of memory: drop the sample rather than the run */
        samples->values = values;
        samples->capacity = capacity;
    }
    samples->values[samples->count++] = value;
}

static int compare_u64(const void *left, const void *right) {
    uint64_t a = *(const uint64_t *)left, b = *(const uint64_t *)right;
    return a < b ? -1 : a > b;
}

struct percentiles {
    double p50, p90, p99, p999, max;
};

static double nearest_rank(const struct samples *sorted, double percentile) {
    size_t rank = (size_t)((percentile / 100.0) * (double)sorted->count + 0.999999999);
    if (rank < 1) rank = 1;
    if (rank > sorted->count) rank = sorted->count;
    return (double)sorted->values[rank - 1];
}

static struct percentiles samples_percentiles(struct samples *samples) {
    struct percentiles result = {0, 0, 0, 0, 0};
    if (samples->count == 0) return result;
    qsort(samples->values, samples->count, sizeof *samples->values, compare_u64);
    result.p50 = nearest_rank(samples, 50);
    result.p90 = nearest_rank(samples, 90);
    result.p99 = nearest_rank(samples, 99);
    result.p999 = nearest_rank(samples, 99.9);
    result.max = (double)samples->values[samples->count - 1];
    return result;
}

struct usage {
    int64_t user_us, system_us, voluntary, involuntary, max_rss_kib;
};

static struct usage process_usage(void) {
    struct rusage raw;
    struct usage usage = {0, 0, 0, 0, 0};
    if (getrusage(RUSAGE_SELF, &raw) != 0) return usage;
    usage.user_us = (int64_t)raw.ru_utime.tv_sec * 1000000 + raw.ru_utime.tv_usec;
    usage.system_us = (int64_t)raw.ru_stime.tv_sec * 1000000 + raw.ru_stime.tv_usec;
    usage.voluntary = raw.ru_nvcsw;
    usage.involuntary = raw.ru_nivcsw;
    usage.max_rss_kib = raw.ru_maxrss;
    return usage;
}

/* The resident set now, KiB (/proc/self/statm's second field, in pages); -1 when unreadable. */
static int64_t resident_kib(void) {
    FILE *file = fopen("/proc/self/statm", "r");
    if (file == NULL) return -1;
    long size = 0, resident = 0;
    int read = fscanf(file, "%ld %ld", &size, &resident);
    fclose(file);
    return read == 2 ? (int64_t)resident * (int64_t)sysconf(_SC_PAGESIZE) / 1024 : -1;
}

static int count_threads(void) {
    DIR *directory = opendir("/proc/self/task");
    if (directory == NULL) return 1;
    int count = 0;
    struct dirent *entry;
    while ((entry = readdir(directory)) != NULL)
        if (entry->d_name[0] != '.') count++;
    closedir(directory);
    return count;
}

/* ---------------------------------------------------------------------------------------------- */
/* The loop's state                                                                                 */

enum phase { PHASE_WARMUP, PHASE_MEASURING, PHASE_DRAINING, PHASE_DONE };

struct slot {
    CURL *easy;
    uint64_t start_ns;
    char *body;
    size_t body_length;
    size_t body_capacity;
    char error[CURL_ERROR_SIZE];
};

struct bench {
    struct options options;
    CURLM *multi;
    int epoll_fd;
    int curl_timer_fd;
    uint64_t curl_deadline_ns; /* when curl wants CURL_SOCKET_TIMEOUT; 0: it wants no timer */
    uint64_t curl_armed_ns;    /* what curl_timer_fd is armed for; 0: not armed (or fired) */
    int control_timer_fd; /* idle settle, the duration deadline, the drain timeout */
    int tick_fd;          /* lateness only */
    struct slot *slots;
    struct curl_slist *headers;
    char *post_body;

    enum phase phase;
    long in_flight;
    long warmup_completed, warmup_errors;
    long requests, errors;
    int64_t bytes_received;
    uint64_t measure_start_ns, measure_end_ns, deadline_ns;
    struct usage usage_start, usage_end;
    struct samples latencies;
    struct samples lateness;
    uint64_t tick_expected_ns;
    int threads_peak;
    int64_t startup_rss_kib; /* set up, nothing sent yet; -1: unreadable */
    uint64_t next_sample_ns;
    int error_samples;
    int drain_timed_out;
    long not_h2; /* h2: successful responses that did not come over HTTP/2 */
};

static void arm_timer_fd(int fd, uint64_t delay_ns) {
    struct itimerspec spec;
    memset(&spec, 0, sizeof spec);
    if (delay_ns == 0) delay_ns = 1; /* an all-zero it_value would disarm */
    spec.it_value.tv_sec = (time_t)(delay_ns / 1000000000ull);
    spec.it_value.tv_nsec = (long)(delay_ns % 1000000000ull);
    timerfd_settime(fd, 0, &spec, NULL);
}

static void disarm_timer_fd(int fd) {
    struct itimerspec spec;
    memset(&spec, 0, sizeof spec);
    timerfd_settime(fd, 0, &spec, NULL);
}

static void drain_timer_fd(int fd) {
    uint64_t expirations;
    ssize_t ignored = read(fd, &expirations, sizeof expirations);
    (void)ignored;
}

static void sample_threads(struct bench *bench, uint64_t now) {
    if (now < bench->next_sample_ns) return;
    bench->next_sample_ns = now + SAMPLE_INTERVAL_NS;
    int threads = count_threads();
    if (threads > bench->threads_peak) bench->threads_peak = threads;
}

static void begin_measuring(struct bench *bench, uint64_t now) {
    bench->phase = PHASE_MEASURING;
    bench->measure_start_ns = now;
    bench->usage_start = process_usage();
    if (bench->options.duration > 0) {
        uint64_t duration_ns = (uint64_t)(bench->options.duration * 1e9);
        bench->deadline_ns = now + duration_ns;
        arm_timer_fd(bench->control_timer_fd, duration_ns);
    }
}

static void end_measuring(struct bench *bench, uint64_t now) {
    bench->phase = PHASE_DRAINING;
    bench->measure_end_ns = now;
    bench->usage_end = process_usage();
    bench->next_sample_ns = 0;
    sample_threads(bench, now);
    if (bench->tick_fd >= 0) disarm_timer_fd(bench->tick_fd);
    if (bench->options.scenario == SCENARIO_IDLE) {
        bench->phase = PHASE_DONE; /* the slow requests are not worth waiting for */
    } else if (bench->in_flight == 0) {
        bench->phase = PHASE_DONE;
    } else {
        arm_timer_fd(bench->control_timer_fd, DRAIN_TIMEOUT_NS);
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* curl callbacks                                                                                   */

static size_t write_body(char *data, size_t size, size_t count, void *context) {
    struct slot *slot = context;
    size_t length = size * count;
    if (slot->body_length + length > slot->body_capacity) {
        size_t capacity = slot->body_capacity ? slot->body_capacity : 4096;
        while (capacity < slot->body_length + length) capacity *= 2;
        char *body = realloc(slot->body, capacity);
        if (body == NULL) return 0; /* fails the transfer with CURLE_WRITE_ERROR */
        slot->body = body;
        slot->body_capacity = capacity;
    }
    memcpy(slot->body + slot->body_length, data, length);
    slot->body_length += length;
    return length;
}

/* `stream`: each chunk counted and dropped, nothing kept. */
static size_t count_body(char *data, size_t size, size_t count, void *context) {
    (void)data;
    struct slot *slot = context;
    slot->body_length += size * count;
    return size * count;
}

/* CURLMOPT_SOCKETFUNCTION: watch exactly the directions curl asks for. */
static int on_socket(CURL *easy, curl_socket_t socket, int what, void *context, void *socket_context) {
    (void)easy;
    struct bench *bench = context;
    if (what == CURL_POLL_REMOVE) {
        if (socket_context != NULL) {
            epoll_ctl(bench->epoll_fd, EPOLL_CTL_DEL, socket, NULL);
            curl_multi_assign(bench->multi, socket, NULL);
        }
        return 0;
    }
    struct epoll_event event;
    memset(&event, 0, sizeof event);
    event.events = ((what & CURL_POLL_IN) ? EPOLLIN : 0) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0);
    event.data.fd = socket;
    if (socket_context == NULL) {
        if (epoll_ctl(bench->epoll_fd, EPOLL_CTL_ADD, socket, &event) != 0 && errno == EEXIST)
            epoll_ctl(bench->epoll_fd, EPOLL_CTL_MOD, socket, &event);
        curl_multi_assign(bench->multi, socket, bench); /* any non-NULL marker: "in the epoll set" */
    } else {
        epoll_ctl(bench->epoll_fd, EPOLL_CTL_MOD, socket, &event);
    }
    return 0;
}

/* CURLMOPT_TIMERFUNCTION: only noted here. curl moves its deadline on almost every request, mostly
 * later, so the timerfd is re-armed lazily (the same policy as Curlew's TimerCoalescer): only when curl
 * wants it earlier than it is armed for, after curl has returned (see settle_curl_timer). A timerfd
 * that fires early costs one curl_multi_socket_action with nothing due; re-arming it for every
 * request costs a timerfd_settime, and curl's "0 ms" after each added handle a whole loop pass. */
static int on_timer(CURLM *multi, long timeout_ms, void *context) {
    (void)multi;
    struct bench *bench = context;
    bench->curl_deadline_ns = timeout_ms < 0 ? 0 : now_ns() + (uint64_t)timeout_ms * 1000000ull;
    return 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* The closed loop                                                                                  */

static int configure_easy(struct bench *bench, struct slot *slot) {
    CURL *easy = curl_easy_init();
    if (easy == NULL) return -1;
    slot->easy = easy;
    curl_easy_setopt(easy, CURLOPT_URL, bench->options.url);
    curl_easy_setopt(easy, CURLOPT_PRIVATE, slot);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, slot->error);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, bench->options.scenario == SCENARIO_STREAM ? count_body : write_body);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, slot);
    if (bench->options.ca_file != NULL) curl_easy_setopt(easy, CURLOPT_CAINFO, bench->options.ca_file);
    if (bench->options.scenario == SCENARIO_H2) {
        curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
        curl_easy_setopt(easy, CURLOPT_PIPEWAIT, 1L); /* wait for the multiplexed connection */
    }
    if (bench->options.scenario == SCENARIO_POST) {
        curl_easy_setopt(easy, CURLOPT_POST, 1L);
        curl_easy_setopt(easy, CURLOPT_POSTFIELDS, bench->post_body);
        curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)bench->options.body_bytes);
        curl_easy_setopt(easy, CURLOPT_HTTPHEADER, bench->headers);
    }
    return 0;
}

static void start_slot(struct bench *bench, struct slot *slot, uint64_t now) {
    slot->start_ns = now;
    slot->body_length = 0;
    slot->error[0] = '\0';
    bench->in_flight++;
    curl_multi_add_handle(bench->multi, slot->easy);
}

static void note_error(struct bench *bench, CURLcode code, long status, const struct slot *slot) {
    if (bench->error_samples >= 5) return;
    bench->error_samples++;
    if (code != CURLE_OK)
        fprintf(stderr, CLIENT_NAME ": error: %s (%s)\n", curl_easy_strerror(code), slot->error);
    else
        fprintf(stderr, CLIENT_NAME ": error: HTTP status %ld\n", status);
}

/* One transfer ended: record it, move the phases on, re-add the handle while the loop refills. */
static void complete(struct bench *bench, CURL *easy, CURLcode code) {
    uint64_t now = now_ns();
    struct slot *slot = NULL;
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&slot);
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    curl_multi_remove_handle(bench->multi, easy);
    bench->in_flight--;
    int failed = code != CURLE_OK || status < 200 || status > 299;
    if (failed) note_error(bench, code, status, slot);
    if (!failed && bench->options.scenario == SCENARIO_H2) {
        long version = 0;
        curl_easy_getinfo(easy, CURLINFO_HTTP_VERSION, &version);
        if (version != CURL_HTTP_VERSION_2_0) bench->not_h2++;
    }

    switch (bench->phase) {
    case PHASE_WARMUP:
        bench->warmup_completed++;
        if (failed) bench->warmup_errors++;
        if (bench->options.scenario != SCENARIO_IDLE && bench->warmup_completed >= bench->options.warmup)
            begin_measuring(bench, now);
        break;
    case PHASE_MEASURING:
        bench->requests++;
        if (failed) bench->errors++;
        else bench->bytes_received += (int64_t)slot->body_length;
        if (bench->options.scenario != SCENARIO_IDLE) samples_add(&bench->latencies, (now - slot->start_ns) / 1000);
        if ((bench->options.requests > 0 && bench->requests >= bench->options.requests) ||
            (bench->deadline_ns != 0 && now >= bench->deadline_ns))
            end_measuring(bench, now);
        break;
    case PHASE_DRAINING:
        if (bench->in_flight == 0) bench->phase = PHASE_DONE;
        break;
    case PHASE_DONE:
        break;
    }
    if (bench->phase == PHASE_WARMUP || bench->phase == PHASE_MEASURING) start_slot(bench, slot, now);
}

static void read_completions(struct bench *bench) {
    CURLMsg *message;
    int pending;
    while ((message = curl_multi_info_read(bench->multi, &pending)) != NULL) {
        if (message->msg == CURLMSG_DONE) complete(bench, message->easy_handle, message->data.result);
    }
}

static void on_control_timer(struct bench *bench, uint64_t now) {
    switch (bench->phase) {
    case PHASE_WARMUP: /* idle: the requests are sent, measure the wait */
        begin_measuring(bench, now);
        break;
    case PHASE_MEASURING: /* the duration is over */
        end_measuring(bench, now);
        break;
    case PHASE_DRAINING: /* the requests in flight did not finish */
        bench->drain_timed_out = 1;
        bench->phase = PHASE_DONE;
        break;
    case PHASE_DONE:
        break;
    }
}

static void on_tick(struct bench *bench, uint64_t now) {
    if (bench->phase == PHASE_MEASURING)
        samples_add(&bench->lateness, now > bench->tick_expected_ns ? (now - bench->tick_expected_ns) / 1000 : 0);
    if (bench->phase == PHASE_WARMUP || bench->phase == PHASE_MEASURING) {
        bench->tick_expected_ns = now_ns() + TICK_NS;
        arm_timer_fd(bench->tick_fd, TICK_NS);
    }
}

/* Before the loop blocks: run curl's timeouts while they are due (the 0 ms after an added handle
 * at once, not a loop pass later; at most IMMEDIATE_ROUNDS times, as the engine's MultiDriver, so that
 * a curl asking for 0 ms again and again cannot starve the sockets), then arm the timerfd if curl's
 * deadline is earlier than the armed one. */
static void settle_curl_timer(struct bench *bench, int *running) {
    uint64_t now = now_ns();
    for (int round = 0; round < IMMEDIATE_ROUNDS && bench->curl_deadline_ns != 0 && bench->curl_deadline_ns <= now;
         round++) {
        bench->curl_deadline_ns = 0;
        curl_multi_socket_action(bench->multi, CURL_SOCKET_TIMEOUT, 0, running);
        read_completions(bench);
        now = now_ns();
    }
    if (bench->curl_deadline_ns != 0 &&
        (bench->curl_armed_ns == 0 || bench->curl_deadline_ns < bench->curl_armed_ns)) {
        bench->curl_armed_ns = bench->curl_deadline_ns;
        arm_timer_fd(bench->curl_timer_fd, bench->curl_deadline_ns > now ? bench->curl_deadline_ns - now : 0);
    }
}

static void run_loop(struct bench *bench) {
    struct epoll_event events[MAX_EVENTS];
    int running = 0;
    while (bench->phase != PHASE_DONE) {
        settle_curl_timer(bench, &running);
        if (bench->phase == PHASE_DONE) break;
        int count = epoll_wait(bench->epoll_fd, events, MAX_EVENTS, -1);
        if (count < 0) {
            if (errno == EINTR) continue;
            perror(CLIENT_NAME ": epoll_wait");
            exit(1);
        }
        for (int index = 0; index < count && bench->phase != PHASE_DONE; index++) {
            int fd = events[index].data.fd;
            uint32_t fired = events[index].events;
            if (fd == bench->curl_timer_fd) {
                drain_timer_fd(fd);
                bench->curl_armed_ns = 0; /* settle_curl_timer runs curl's timeouts if they are due */
            } else if (fd == bench->control_timer_fd) {
                drain_timer_fd(fd);
                on_control_timer(bench, now_ns());
            } else if (fd == bench->tick_fd) {
                drain_timer_fd(fd);
                on_tick(bench, now_ns());
            } else {
                int action = ((fired & EPOLLIN) ? CURL_CSELECT_IN : 0) | ((fired & EPOLLOUT) ? CURL_CSELECT_OUT : 0) |
                             ((fired & (EPOLLERR | EPOLLHUP)) ? CURL_CSELECT_ERR : 0);
                curl_multi_socket_action(bench->multi, fd, action, &running);
            }
            read_completions(bench);
        }
        sample_threads(bench, now_ns());
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* Output                                                                                           */

static void print_json_string(const char *text) {
    putchar('"');
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        if (*c == '"' || *c == '\\') printf("\\%c", *c);
        else if (*c < 0x20) printf("\\u%04x", *c);
        else putchar(*c);
    }
    putchar('"');
}

static void print_percentiles(const char *key, struct percentiles value) {
    printf("\"%s\":{\"max\":%.0f,\"p50\":%.0f,\"p90\":%.0f,\"p99\":%.0f,\"p999\":%.0f}", key, value.max, value.p50,
           value.p90, value.p99, value.p999);
}

/* One ClientResult line (keys sorted, like the Swift clients' encoder). */
static void print_result(struct bench *bench) {
    const struct options *options = &bench->options;
    double elapsed = bench->measure_end_ns > bench->measure_start_ns
                         ? (double)(bench->measure_end_ns - bench->measure_start_ns) / 1e9
                         : 0;
    struct percentiles latency = samples_percentiles(&bench->latencies);
    printf("{\"bytesReceived\":%lld,\"client\":", (long long)bench->bytes_received);
    print_json_string(options->client);
    printf(",\"concurrency\":%ld,\"cpuSystemMicros\":%lld,\"cpuUserMicros\":%lld,\"elapsedSeconds\":%.9f,"
           "\"errors\":%ld,\"involuntaryContextSwitches\":%lld,",
           options->concurrency, (long long)(bench->usage_end.system_us - bench->usage_start.system_us),
           (long long)(bench->usage_end.user_us - bench->usage_start.user_us), elapsed, bench->errors,
           (long long)(bench->usage_end.involuntary - bench->usage_start.involuntary));
    print_percentiles("latency", latency);
    if (options->scenario == SCENARIO_LATENESS) {
        putchar(',');
        print_percentiles("mainThreadLateness", samples_percentiles(&bench->lateness));
    }
    printf(",\"maxRSSKiB\":%lld,\"note\":", (long long)bench->usage_end.max_rss_kib);
    char not_h2[96] = "";
    if (bench->not_h2 > 0) snprintf(not_h2, sizeof not_h2, "; %ld responses (warm-up included) did not use HTTP/2", bench->not_h2);
    char note[512];
    snprintf(note, sizeof note,
             "C curl-multi loop: epoll + timerfd + curl_multi_socket_action, easy handles recycled, one thread%s%s%s",
             options->scenario == SCENARIO_LATENESS ? "; lateness is a 1 ms timerfd tick on that loop thread" : "",
             bench->drain_timed_out ? "; the requests in flight after the measured phase did not finish within 10 s"
                                    : "",
             not_h2);
    print_json_string(note);
    printf(",\"requests\":%ld,\"scenario\":\"%s\"", bench->requests, scenario_names[options->scenario]);
    if (bench->startup_rss_kib >= 0) printf(",\"startupRSSKiB\":%lld", (long long)bench->startup_rss_kib);
    printf(",\"threadsPeak\":%d,\"voluntaryContextSwitches\":%lld}\n", bench->threads_peak,
           (long long)(bench->usage_end.voluntary - bench->usage_start.voluntary));
    fflush(stdout);
}

/* ---------------------------------------------------------------------------------------------- */

int main(int argc, char **argv) {
    struct bench bench;
    memset(&bench, 0, sizeof bench);
    bench.options = parse_options(argc, argv);
    bench.tick_fd = -1;
    const struct options *options = &bench.options;

    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        fputs("error: " CLIENT_NAME ": curl_global_init failed\n", stderr);
        return 1;
    }
    bench.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    bench.curl_timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    bench.control_timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (options->scenario == SCENARIO_LATENESS) bench.tick_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    bench.multi = curl_multi_init();
    bench.slots = calloc((size_t)options->concurrency, sizeof *bench.slots);
    if (bench.epoll_fd < 0 || bench.curl_timer_fd < 0 || bench.control_timer_fd < 0 ||
        (options->scenario == SCENARIO_LATENESS && bench.tick_fd < 0) || bench.multi == NULL || bench.slots == NULL) {
        fputs("error: " CLIENT_NAME ": cannot set up the event loop\n", stderr);
        return 1;
    }
    int timer_fds[3] = {bench.curl_timer_fd, bench.control_timer_fd, bench.tick_fd};
    for (int index = 0; index < 3; index++) {
        if (timer_fds[index] < 0) continue;
        struct epoll_event event;
        memset(&event, 0, sizeof event);
        event.events = EPOLLIN;
        event.data.fd = timer_fds[index];
        epoll_ctl(bench.epoll_fd, EPOLL_CTL_ADD, timer_fds[index], &event);
    }

    curl_multi_setopt(bench.multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(bench.multi, CURLMOPT_SOCKETDATA, &bench);
    curl_multi_setopt(bench.multi, CURLMOPT_TIMERFUNCTION, on_timer);
    curl_multi_setopt(bench.multi, CURLMOPT_TIMERDATA, &bench);
    curl_multi_setopt(bench.multi, CURLMOPT_MAX_HOST_CONNECTIONS, options->connections);
    curl_multi_setopt(bench.multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
    curl_multi_setopt(bench.multi, CURLMOPT_MAX_CONCURRENT_STREAMS, 100L); /* Curlew's default */

    if (options->scenario == SCENARIO_POST) {
        bench.post_body = malloc((size_t)options->body_bytes + 1);
        if (bench.post_body == NULL) return 1;
        memset(bench.post_body, 'x', (size_t)options->body_bytes);
        bench.headers = curl_slist_append(NULL, "Content-Type: application/octet-stream");
    }
    for (long index = 0; index < options->concurrency; index++) {
        if (configure_easy(&bench, &bench.slots[index]) != 0) {
            fputs("error: " CLIENT_NAME ": curl_easy_init failed\n", stderr);
            return 1;
        }
    }

    bench.threads_peak = count_threads();
    bench.startup_rss_kib = resident_kib();
    uint64_t now = now_ns();
    if (options->scenario != SCENARIO_IDLE && options->warmup == 0) begin_measuring(&bench, now);
    if (options->scenario == SCENARIO_IDLE) arm_timer_fd(bench.control_timer_fd, IDLE_SETTLE_NS);
    if (bench.tick_fd >= 0) {
        bench.tick_expected_ns = now_ns() + TICK_NS;
        arm_timer_fd(bench.tick_fd, TICK_NS);
    }
    for (long index = 0; index < options->concurrency; index++) start_slot(&bench, &bench.slots[index], now_ns());

    run_loop(&bench);
    if (bench.measure_end_ns == 0) { /* never measured */
        bench.measure_start_ns = bench.measure_end_ns = now_ns();
        bench.usage_start = bench.usage_end = process_usage();
    }
    fprintf(stderr, CLIENT_NAME " %s c=%ld: %ld requests in %.3f s, %ld errors, warm-up %ld (%ld errors)\n",
            scenario_names[options->scenario], options->concurrency, bench.requests,
            (double)(bench.measure_end_ns - bench.measure_start_ns) / 1e9, bench.errors, bench.warmup_completed,
            bench.warmup_errors);
    print_result(&bench);

    /* Tear down: handles still in flight (idle, or a drain timeout) are removed first. */
    for (long index = 0; index < options->concurrency; index++) {
        curl_multi_remove_handle(bench.multi, bench.slots[index].easy);
        curl_easy_cleanup(bench.slots[index].easy);
        free(bench.slots[index].body);
    }
    curl_multi_cleanup(bench.multi);
    curl_slist_free_all(bench.headers);
    free(bench.post_body);
    free(bench.slots);
    free(bench.latencies.values);
    free(bench.lateness.values);
    curl_global_cleanup();
    return 0;
}
