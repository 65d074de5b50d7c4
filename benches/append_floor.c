/*
 * The floor of a record plan's journal append (docs/PERFORMANCE.md): only what any durable
 * appender of one event must do, nothing else. Read the journal whole (the next seq is one
 * above the last line's), append one compact line to it with O_APPEND, fdatasync it; print the
 * seq written. It judges nothing, takes no lock and writes no snapshot. Exits non-zero on any
 * failure.
 *
 * Build: cc -O2 -o append_floor benches/append_floor.c
 * Run:   append_floor PLAN/journal.ndjson
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(const char *what, const char *path) {
    fprintf(stderr, "append_floor: %s %s: %s\n", what, path, strerror(errno));
    return 1;
}

/* The integer after the last `"seq":` in `buf` (0 when there is none). */
static long last_seq(const char *buf, size_t len) {
    const char *key = "\"seq\":";
    size_t k = strlen(key);
    for (size_t i = len; i >= k; i--) {
        if (memcmp(buf + i - k, key, k) == 0) return strtol(buf + i, NULL, 10);
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: append_floor JOURNAL\n");
        return 2;
    }
    const char *path = argv[1];
    int fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC);
    if (fd < 0) return fail("open", path);
    struct stat st;
    if (fstat(fd, &st) != 0) return fail("stat", path);
    char *buf = malloc(st.st_size + 1);
    size_t got = 0;
    while (buf != NULL && got < (size_t)st.st_size) {
        ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
        if (n <= 0) return fail("read", path);
        got += (size_t)n;
    }
    long seq = last_seq(buf, got) + 1;
    char line[256];
    int n = snprintf(line, sizeof line,
                     "{\"actor\":{\"identity\":\"floor\",\"kind\":\"helper\"},\"reason\":\"floor\","
                     "\"seq\":%ld,\"stage\":\"gate\",\"subject\":\"floor\",\"type\":\"refusal\"}\n",
                     seq);
    if (write(fd, line, (size_t)n) != n) return fail("write", path);
    if (fdatasync(fd) != 0) return fail("fdatasync", path);
    printf("%ld\n", seq);
    return 0;
}
