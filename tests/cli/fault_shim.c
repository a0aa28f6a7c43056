/* An LD_PRELOAD library that makes chosen system calls of a real program fail, so that the
 * CLI's handling of a full disk, an I/O error, an interruption or a short write can be tested
 * end to end (tests/cli/test_cli_faults.py). It wraps open, write, fsync, rename and renameat2,
 * passing each call on to the C library's (dlsym RTLD_NEXT) unless it is to fail.
 *
 * Configured by environment variables, read at each call:
 *   ZARRKIT_FAULT_CALL   which call fails: open (creating), write, fsync, rename (rename and
 *                        renameat2), renameat2 (only the swap of a whole node)
 *   ZARRKIT_FAULT_ERRNO  ENOSPC, EIO, EDQUOT, EROFS, EXDEV, EINVAL: every matching call fails so;
 *                        EINTR: every other matching call is interrupted (a retry succeeds);
 *                        SHORT: writes transfer at most half of what they are given
 *   ZARRKIT_FAULT_PATH   only calls on paths containing this text (the file of an fd-based
 *                        call is found through /proc/self/fd); default ".zarrkit-tmp."
 *   ZARRKIT_FAULT_SKIP   let this many matching calls through first (default 0)
 *   ZARRKIT_FAULT_LOG    a file to which every fsync, rename and renameat2 is appended as a line,
 *                        in the order they ran (before they run): "fsync PATH", "rename FROM TO",
 *                        "renameat2 FROM TO" (paths as given; fsync's from /proc/self/fd)
 * Calls made inside the C library (stdio's own writes) are not seen, which is why the paths
 * that matter (the store's files) go through these wrappers. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static long matching_calls;

static const char* setting(const char* name, const char* fallback) {
  const char* value = getenv(name);
  return value != NULL && value[0] != '\0' ? value : fallback;
}

static int parse_errno(const char* name) {
  if (strcmp(name, "ENOSPC") == 0) return ENOSPC;
  if (strcmp(name, "EIO") == 0) return EIO;
  if (strcmp(name, "EINTR") == 0) return EINTR;
  if (strcmp(name, "EDQUOT") == 0) return EDQUOT;
  if (strcmp(name, "EROFS") == 0) return EROFS;
  if (strcmp(name, "EXDEV") == 0) return EXDEV;
  if (strcmp(name, "EINVAL") == 0) return EINVAL;
  return 0;
}

static int path_matches(const char* path) {
  return path != NULL && strstr(path, setting("ZARRKIT_FAULT_PATH", ".zarrkit-tmp.")) != NULL;
}

static int fd_matches(int fd) {
  char link[64], path[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, sizeof path - 1);
  if (n < 0) return 0;
  path[n] = '\0';
  return path_matches(path);
}

#define NEXT(name, type) ((type)dlsym(RTLD_NEXT, name))

/* Appends "name a [b]" to ZARRKIT_FAULT_LOG, through the C library's own open and write. */
static void log_call(const char* name, const char* a, const char* b) {
  const char* file = getenv("ZARRKIT_FAULT_LOG");
  if (file == NULL || file[0] == '\0') return;
  char line[8192];
  int n = snprintf(line, sizeof line, "%s %s%s%s\n", name, a, b != NULL ? " " : "", b != NULL ? b : "");
  if (n < 0) return;
  if ((size_t)n >= sizeof line) n = (int)sizeof line - 1;
  int fd = NEXT("open", int (*)(const char*, int, ...))(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  NEXT("write", ssize_t (*)(int, const void*, size_t))(fd, line, (size_t)n);
  close(fd);
}

static void fd_path(int fd, char* path, size_t size) {
  char link[64];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, size - 1);
  path[n < 0 ? 0 : n] = '\0';
}

/* What the call `name` on a matching path must do now: 0 run it, -1 make it short (write
 * with SHORT), or the errno it fails with. */
static int fault_for(const char* name, int matches) {
  const char* call = getenv("ZARRKIT_FAULT_CALL");
  if (call == NULL || !matches) return 0;
  if (strcmp(call, name) != 0 && !(strcmp(call, "rename") == 0 && strcmp(name, "renameat2") == 0)) return 0;
  long n = ++matching_calls;
  if (n <= atol(setting("ZARRKIT_FAULT_SKIP", "0"))) return 0;
  const char* kind = setting("ZARRKIT_FAULT_ERRNO", "EIO");
  if (strcmp(kind, "SHORT") == 0) return -1;
  int error = parse_errno(kind);
  if (error == EINTR) return n % 2 == 1 ? EINTR : 0;
  return error;
}

int open(const char* path, int flags, ...) {
  mode_t mode = 0;
  if (flags & (O_CREAT | O_TMPFILE)) {
    va_list args;
    va_start(args, flags);
    mode = (mode_t)va_arg(args, int);
    va_end(args);
  }
  int error = fault_for("open", path_matches(path) && (flags & O_CREAT));
  if (error > 0) {
    errno = error;
    return -1;
  }
  return NEXT("open", int (*)(const char*, int, ...))(path, flags, mode);
}

ssize_t write(int fd, const void* buffer, size_t count) {
  int error = fault_for("write", fd > 2 && fd_matches(fd));
  if (error > 0) {
    errno = error;
    return -1;
  }
  if (error < 0 && count > 1) count /= 2;
  return NEXT("write", ssize_t (*)(int, const void*, size_t))(fd, buffer, count);
}

int fsync(int fd) {
  char path[4096];
  fd_path(fd, path, sizeof path);
  log_call("fsync", path, NULL);
  int error = fault_for("fsync", fd_matches(fd));
  if (error > 0) {
    errno = error;
    return -1;
  }
  return NEXT("fsync", int (*)(int))(fd);
}

int rename(const char* from, const char* to) {
  log_call("rename", from, to);
  int error = fault_for("rename", path_matches(from));
  if (error > 0) {
    errno = error;
    return -1;
  }
  return NEXT("rename", int (*)(const char*, const char*))(from, to);
}

int renameat2(int from_dir, const char* from, int to_dir, const char* to, unsigned int flags) {
  log_call("renameat2", from, to);
  int error = fault_for("renameat2", path_matches(from));
  if (error > 0) {
    errno = error;
    return -1;
  }
  return NEXT("renameat2", int (*)(int, const char*, int, const char*, unsigned int))(from_dir, from, to_dir, to,
                                                                                       flags);
}
