/*
 * The floor of benches/targets.rs: only what a durable writer of state.json must do, nothing
 * else. Read the file whole, SHA-256 it, write the same bytes to a new temp file in the same
 * folder (O_EXCL), fsync it, rename it over the file, fsync the folder; print the first bytes of
 * the digest in hex. Exits non-zero on any failure.
 *
 * Build: cc -O2 -o floor benches/floor.c -lcrypto
 * Run:   floor PLAN/state.json
 */
#include <errno.h>
#include <fcntl.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(const char *what, const char *path) {
    fprintf(stderr, "floor: %s %s: %s\n", what, path, strerror(errno));
    return 1;
}

/* Read all of `path` into a new buffer; its length in *len. NULL on failure. */
static unsigned char *read_all(const char *path, size_t *len) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return NULL;
    }
    unsigned char *buf = malloc(st.st_size > 0 ? (size_t)st.st_size : 1);
    size_t got = 0;
    while (buf != NULL && got < (size_t)st.st_size) {
        ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
        if (n <= 0) {
            free(buf);
            buf = NULL;
        } else {
            got += (size_t)n;
        }
    }
    close(fd);
    *len = got;
    return buf;
}

/* Write all of `buf` to `fd`; 0 on success. */
static int write_all(int fd, const unsigned char *buf, size_t len) {
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n <= 0) return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: floor PATH/state.json\n");
        return 2;
    }
    const char *path = argv[1];
    char dir[4096], temp[4200];
    const char *slash = strrchr(path, '/');
    if (slash == NULL) {
        strcpy(dir, ".");
    } else {
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    }
    snprintf(temp, sizeof temp, "%s/.state.json.floor.%ld", dir, (long)getpid());

    size_t len = 0;
    unsigned char *bytes = read_all(path, &len);
    if (bytes == NULL) return fail("read", path);
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(bytes, len, digest);

    int fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return fail("create", temp);
    if (write_all(fd, bytes, len) != 0) return fail("write", temp);
    if (fsync(fd) != 0) return fail("fsync", temp);
    if (close(fd) != 0) return fail("close", temp);
    if (rename(temp, path) != 0) return fail("rename", temp);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return fail("open", dir);
    if (fsync(dfd) != 0) return fail("fsync", dir);
    close(dfd);
    free(bytes);

    for (int i = 0; i < 8; i++) printf("%02x", digest[i]);
    printf("\n");
    return 0;
}
