/*
 * The floor of a publication (benches/targets.rs, terminal close): the least a crash-safe
 * terminal transition does under spec 003's finalizer rules (docs/CONFORMANCE.md, DWP080 and
 * DWP081), with no check at all. It reads state.json and every other regular file of the plan
 * folder and hashes each (the artifacts the candidate is validated against), then:
 *
 *   1. writes the candidate (state.json's own bytes) to a temp file and fsyncs it;
 *   2. writes a small marker (the two digests and the temp's name) to a temp file, fsyncs it,
 *      renames it into place and fsyncs the folder: an interrupted publication leaves it;
 *   3. renames the candidate over state.json and fsyncs the folder;
 *   4. reads and hashes every artifact again (the files are verified after the write);
 *   5. writes the receipt (the digests) to a temp file, fsyncs it, renames it into
 *      analysis_results/, removes the marker and fsyncs both folders.
 *
 * Reading and hashing run on two threads, as dwp's do. It is below any real finalizer: it
 * parses nothing, checks nothing, reads no file in analysis_results/, and its marker names the
 * candidate instead of holding it. Prints the first bytes of the artifacts digest in hex; exits
 * non-zero on any failure.
 *
 * Build: cc -O2 -pthread -o publication_floor benches/publication_floor.c -lcrypto
 * Run:   publication_floor PLAN
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/sha.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_FILES 65536

static char *names[MAX_FILES];
static unsigned char digests[MAX_FILES][SHA256_DIGEST_LENGTH];
static int count;
static int dir_fd;

static int fail(const char *what, const char *path) {
    fprintf(stderr, "publication_floor: %s %s: %s\n", what, path, strerror(errno));
    return 1;
}

/* Read `name` (relative to the plan folder) whole and hash it into `digest`; 0 on success. */
static int hash_file(const char *name, unsigned char *digest) {
    int fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return -1;
    }
    size_t size = (size_t)st.st_size;
    unsigned char *buf = malloc(size > 0 ? size : 1);
    size_t got = 0;
    while (buf != NULL && got < size) {
        ssize_t n = read(fd, buf + got, size - got);
        if (n <= 0) break;
        got += (size_t)n;
    }
    close(fd);
    if (buf == NULL || got != size) {
        free(buf);
        return -1;
    }
    SHA256(buf, size, digest);
    free(buf);
    return 0;
}

struct half {
    int from, to, failed;
};

static void *hash_half(void *arg) {
    struct half *h = arg;
    for (int i = h->from; i < h->to; i++) {
        if (hash_file(names[i], digests[i]) != 0) h->failed = 1;
    }
    return NULL;
}

/* Every file hashed, on two threads; the digest of all of them in `out`. 0 on success. */
static int hash_all(unsigned char *out) {
    struct half halves[2] = {{0, count / 2, 0}, {count / 2, count, 0}};
    pthread_t other;
    if (pthread_create(&other, NULL, hash_half, &halves[1]) != 0) return -1;
    hash_half(&halves[0]);
    pthread_join(other, NULL);
    if (halves[0].failed || halves[1].failed) return -1;
    SHA256((const unsigned char *)digests, (size_t)count * SHA256_DIGEST_LENGTH, out);
    return 0;
}

/* Write `len` bytes to a new file `temp` in `at`, fsync it, and (when `name` is set) rename
 * it to `name`. 0 on success. */
static int write_durably(int at, const char *temp, const char *name, const void *buf,
                         size_t len) {
    int fd = openat(at, temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    const unsigned char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n <= 0) return -1;
        p += n;
        len -= (size_t)n;
    }
    if (fsync(fd) != 0 || close(fd) != 0) return -1;
    if (name != NULL && renameat(at, temp, at, name) != 0) return -1;
    return 0;
}

static void hex(const unsigned char *digest, char *out) {
    for (int i = 0; i < SHA256_DIGEST_LENGTH; i++) sprintf(out + 2 * i, "%02x", digest[i]);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: publication_floor PLAN\n");
        return 2;
    }
    const char *plan = argv[1];
    dir_fd = open(plan, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd < 0) return fail("open", plan);
    DIR *listing = fdopendir(dup(dir_fd));
    if (listing == NULL) return fail("list", plan);
    struct dirent *entry;
    while ((entry = readdir(listing)) != NULL) {
        if (entry->d_type != DT_REG || strcmp(entry->d_name, "state.json") == 0) continue;
        if (count == MAX_FILES) return fail("list (too many files)", plan);
        names[count++] = strdup(entry->d_name);
    }
    closedir(listing);

    unsigned char candidate[SHA256_DIGEST_LENGTH], before[SHA256_DIGEST_LENGTH],
        after[SHA256_DIGEST_LENGTH];
    int state_fd = openat(dir_fd, "state.json", O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (state_fd < 0 || fstat(state_fd, &st) != 0) return fail("read", "state.json");
    unsigned char *state = malloc((size_t)st.st_size + 1);
    if (state == NULL || read(state_fd, state, (size_t)st.st_size) != st.st_size)
        return fail("read", "state.json");
    close(state_fd);
    SHA256(state, (size_t)st.st_size, candidate);
    if (hash_all(before) != 0) return fail("read artifacts of", plan);

    char temp[64], marker[256], candidate_hex[65], digest_hex[65];
    snprintf(temp, sizeof temp, ".state.json.floor.%ld", (long)getpid());
    if (write_durably(dir_fd, temp, NULL, state, (size_t)st.st_size) != 0)
        return fail("write", temp);
    hex(candidate, candidate_hex);
    hex(before, digest_hex);
    int marker_len = snprintf(marker, sizeof marker,
                              "{\"candidate\":\"%s\",\"artifacts\":\"%s\",\"temp\":\"%s\"}\n",
                              candidate_hex, digest_hex, temp);
    if (write_durably(dir_fd, ".marker.floor.tmp", ".marker.floor", marker,
                      (size_t)marker_len) != 0)
        return fail("write", ".marker.floor");
    if (fsync(dir_fd) != 0) return fail("fsync", plan);
    if (renameat(dir_fd, temp, dir_fd, "state.json") != 0) return fail("rename", temp);
    if (fsync(dir_fd) != 0) return fail("fsync", plan);

    if (hash_all(after) != 0) return fail("re-read artifacts of", plan);
    if (memcmp(before, after, sizeof before) != 0) return fail("artifacts changed in", plan);
    if (mkdirat(dir_fd, "analysis_results", 0755) != 0 && errno != EEXIST)
        return fail("create", "analysis_results");
    int results_fd = openat(dir_fd, "analysis_results", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (results_fd < 0) return fail("open", "analysis_results");
    if (write_durably(results_fd, ".receipt.floor.tmp", "FINALIZATION.floor.json", marker,
                      (size_t)marker_len) != 0)
        return fail("write", "receipt");
    if (unlinkat(dir_fd, ".marker.floor", 0) != 0) return fail("remove", ".marker.floor");
    if (fsync(results_fd) != 0 || fsync(dir_fd) != 0) return fail("fsync", plan);
    close(results_fd);
    close(dir_fd);

    printf("%.16s\n", digest_hex);
    return 0;
}
