/* CPU-side costs of the QAT Paillier client designs (Zhou and Hua, QHCS), measured on one core.
 *
 * Built and run by benchmarks/qat_cpu_costs.py; prints one JSON object. Every test runs pinned
 * to one CPU, as the paper pins its clients, for about `seconds` each:
 *
 *  thread_switch_s[N]   N threads in a ring, each waking the next through a semaphore and
 *                       touching `touch` bytes of its own buffer: the cost of one hand-over
 *                       from a blocked synchronous caller to the next (S2 with N = 1000).
 *  coroutine_swap_s[N]  N OpenSSL ASYNC_JOB fibres resumed round-robin, each touching its buffer
 *                       and pausing: one resume plus one pause, what QHCS does per coroutine run.
 *  gmp_powm_2048_1024_s mpz_powm with a 2048-bit modulus and a 1024-bit exponent: one of the two
 *                       modexps of a 1024-bit Paillier encryption in software (libhcs uses GMP).
 *  paillier_pre_s       a random 1024-bit r and the two operands exported to 256-byte buffers
 *                       (what the client prepares before submitting the modexps).
 *  paillier_post_s      the two results imported, one 2048-bit product mod n^2, exported.
 *  ring_submit_s        memory work of one request: a 64-byte descriptor written to a shared
 *                       ring slot with a release store (a card's MMIO doorbell is not included).
 *  ring_poll_s          one poll of an empty response ring (an acquire load of its tail).
 *  ring_callback_s      taking one response: reading its descriptor and a callback call.
 */
#define _GNU_SOURCE
#include <gmp.h>
#include <openssl/async.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* CPU time of the whole process, not wall time: the cores are shared, and every thread of a
 * test runs on the one pinned CPU, so process CPU time is the work the test itself did. */
static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void pin(int cpu) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    sched_setaffinity(0, sizeof s, &s);
}

/* ---- thread ring ---------------------------------------------------------------------- */
typedef struct {
    sem_t sem;
    char *buf;
} slot_t;

static slot_t *slots;
static int n_threads, touch;
static atomic_long hops;
static atomic_int stop;
static volatile long sink;

static void touch_buf(char *b) {
    long acc = 0;
    for (int i = 0; i < touch; i += 64) {
        b[i]++;
        acc += b[i];
    }
    sink += acc;
}

static void *ring_worker(void *arg) {
    long i = (long)arg;
    pin(0);
    for (;;) {
        sem_wait(&slots[i].sem);
        if (atomic_load(&stop)) {
            sem_post(&slots[(i + 1) % n_threads].sem);
            return NULL;
        }
        touch_buf(slots[i].buf);
        atomic_fetch_add(&hops, 1);
        sem_post(&slots[(i + 1) % n_threads].sem);
    }
}

static double thread_switch(int n, double seconds) {
    n_threads = n;
    slots = calloc(n, sizeof *slots);
    pthread_t *t = calloc(n, sizeof *t);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    for (int i = 0; i < n; i++) {
        sem_init(&slots[i].sem, 0, 0);
        slots[i].buf = aligned_alloc(64, (touch + 63) / 64 * 64 + 64);
        memset(slots[i].buf, 0, touch + 64);
    }
    atomic_store(&stop, 0);
    atomic_store(&hops, 0);
    for (long i = 0; i < n; i++) pthread_create(&t[i], &attr, ring_worker, (void *)i);
    sem_post(&slots[0].sem);
    double w0 = now();
    while (now() - w0 < 0.1) sched_yield(); /* let the ring warm up (and its stacks fault in) */
    long h0 = atomic_load(&hops);
    double t0 = now(), t1;
    do {
        struct timespec d = {0, 20000000};
        nanosleep(&d, NULL);
        t1 = now();
    } while (t1 - t0 < seconds);
    long h1 = atomic_load(&hops);
    t1 = now();
    atomic_store(&stop, 1);
    for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < n; i++) {
        sem_destroy(&slots[i].sem);
        free(slots[i].buf);
    }
    free(slots);
    free(t);
    return (t1 - t0) / (double)(h1 - h0);
}

/* ---- OpenSSL ASYNC fibres ------------------------------------------------------------- */
typedef struct {
    char *buf;
} job_arg_t;

static int fibre(void *arg) {
    job_arg_t *a = *(job_arg_t **)arg;
    for (;;) {
        touch_buf(a->buf);
        ASYNC_pause_job();
    }
    return 0;
}

static double coroutine_swap(int n, double seconds) {
    ASYNC_JOB **jobs = calloc(n, sizeof *jobs);
    ASYNC_WAIT_CTX **ctx = calloc(n, sizeof *ctx);
    job_arg_t *args = calloc(n, sizeof *args);
    ASYNC_init_thread(n, n);
    int ret;
    for (int i = 0; i < n; i++) {
        ctx[i] = ASYNC_WAIT_CTX_new();
        args[i].buf = aligned_alloc(64, (touch + 63) / 64 * 64 + 64);
        memset(args[i].buf, 0, touch + 64);
        job_arg_t *p = &args[i];
        if (ASYNC_start_job(&jobs[i], ctx[i], &ret, fibre, &p, sizeof p) != ASYNC_PAUSE) return -1.0;
    }
    long runs = 0;
    double t0 = now(), t1;
    do {
        for (int k = 0; k < 1000; k++) {
            int i = (int)(runs % n);
            ASYNC_start_job(&jobs[i], ctx[i], &ret, fibre, NULL, 0);
            runs++;
        }
        t1 = now();
    } while (t1 - t0 < seconds);
    /* the fibres never finish; the process exits after printing */
    return (t1 - t0) / (double)runs;
}

/* ---- GMP ---------------------------------------------------------------------------- */
static gmp_randstate_t rs;

static double gmp_powm(double seconds) {
    mpz_t n2, b, e, r;
    mpz_inits(n2, b, e, r, NULL);
    mpz_urandomb(n2, rs, 2048);
    mpz_setbit(n2, 2047);
    mpz_setbit(n2, 0);
    mpz_urandomm(b, rs, n2);
    mpz_urandomb(e, rs, 1024);
    mpz_setbit(e, 1023);
    long k = 0;
    double t0 = now(), t1;
    do {
        mpz_powm(r, b, e, n2);
        k++;
        t1 = now();
    } while (t1 - t0 < seconds);
    sink += mpz_size(r);
    mpz_clears(n2, b, e, r, NULL);
    return (t1 - t0) / k;
}

static double paillier_pre(double seconds) {
    mpz_t n, r, m;
    mpz_inits(n, r, m, NULL);
    mpz_urandomb(n, rs, 1024);
    mpz_setbit(n, 1023);
    mpz_urandomm(m, rs, n);
    unsigned char out[3][256];
    size_t len;
    long k = 0;
    double t0 = now(), t1;
    do {
        mpz_urandomm(r, rs, n);                 /* the random r of this encryption */
        mpz_export(out[0], &len, 1, 1, 1, 0, r); /* operands of g^m and r^n into request buffers */
        mpz_export(out[1], &len, 1, 1, 1, 0, m);
        mpz_export(out[2], &len, 1, 1, 1, 0, n);
        k++;
        t1 = now();
    } while (t1 - t0 < seconds);
    sink += out[0][0];
    mpz_clears(n, r, m, NULL);
    return (t1 - t0) / k;
}

static double paillier_post(double seconds) {
    mpz_t n2, a, b, c;
    mpz_inits(n2, a, b, c, NULL);
    mpz_urandomb(n2, rs, 2048);
    mpz_setbit(n2, 2047);
    unsigned char in[2][256], out[256];
    mpz_urandomm(a, rs, n2);
    mpz_export(in[0], NULL, 1, 1, 1, 0, a);
    mpz_urandomm(b, rs, n2);
    mpz_export(in[1], NULL, 1, 1, 1, 0, b);
    size_t len;
    long k = 0;
    double t0 = now(), t1;
    do {
        mpz_import(a, 256, 1, 1, 1, 0, in[0]); /* the two responses */
        mpz_import(b, 256, 1, 1, 1, 0, in[1]);
        mpz_mul(c, a, b);                       /* c = g^m * r^n mod n^2 */
        mpz_mod(c, c, n2);
        mpz_export(out, &len, 1, 1, 1, 0, c);
        k++;
        t1 = now();
    } while (t1 - t0 < seconds);
    sink += out[0];
    mpz_clears(n2, a, b, c, NULL);
    return (t1 - t0) / k;
}

/* ---- ring analogues ------------------------------------------------------------------ */
#define RING 1024
typedef struct {
    uint64_t w[8];
} desc_t;
static desc_t ring[RING];
static _Atomic uint32_t ring_tail;
static void (*volatile cb)(desc_t *);
static void on_response(desc_t *d) { sink += (long)d->w[3]; }

static double ring_submit(double seconds) {
    long k = 0;
    double t0 = now(), t1;
    do {
        for (int j = 0; j < 1000; j++) {
            uint32_t t = atomic_load_explicit(&ring_tail, memory_order_relaxed);
            desc_t *d = &ring[t % RING];
            for (int w = 0; w < 8; w++) d->w[w] = (uint64_t)k * 8 + w;
            atomic_store_explicit(&ring_tail, t + 1, memory_order_release);
            k++;
        }
        t1 = now();
    } while (t1 - t0 < seconds);
    return (t1 - t0) / k;
}

static double ring_poll(double seconds) {
    long k = 0, seen = 0;
    double t0 = now(), t1;
    do {
        for (int j = 0; j < 1000; j++) {
            seen += atomic_load_explicit(&ring_tail, memory_order_acquire) != 0xffffffffu;
            k++;
        }
        t1 = now();
    } while (t1 - t0 < seconds);
    sink += seen;
    return (t1 - t0) / k;
}

static double ring_callback(double seconds) {
    cb = on_response;
    long k = 0;
    double t0 = now(), t1;
    do {
        for (int j = 0; j < 1000; j++) {
            desc_t d = ring[k % RING];
            cb(&d);
            k++;
        }
        t1 = now();
    } while (t1 - t0 < seconds);
    return (t1 - t0) / k;
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 0.5;
    int big = argc > 2 ? atoi(argv[2]) : 1000;
    touch = argc > 3 ? atoi(argv[3]) : 2048;
    pin(0);
    gmp_randinit_default(rs);
    gmp_randseed_ui(rs, 12345);
    printf("{\"seconds\": %g, \"threads\": %d, \"touch_bytes\": %d,\n", seconds, big, touch);
    printf(" \"thread_switch_s_2\": %.6e,\n", thread_switch(2, seconds));
    printf(" \"thread_switch_s_many\": %.6e,\n", thread_switch(big, seconds));
    printf(" \"coroutine_swap_s_1\": %.6e,\n", coroutine_swap(1, seconds));
    printf(" \"coroutine_swap_s_many\": %.6e,\n", coroutine_swap(big, seconds));
    printf(" \"gmp_powm_2048_1024_s\": %.6e,\n", gmp_powm(seconds));
    printf(" \"paillier_pre_s\": %.6e,\n", paillier_pre(seconds));
    printf(" \"paillier_post_s\": %.6e,\n", paillier_post(seconds));
    printf(" \"ring_submit_s\": %.6e,\n", ring_submit(seconds));
    printf(" \"ring_poll_s\": %.6e,\n", ring_poll(seconds));
    printf(" \"ring_callback_s\": %.6e}\n", ring_callback(seconds));
    fflush(stdout);
    _exit(0);
}
