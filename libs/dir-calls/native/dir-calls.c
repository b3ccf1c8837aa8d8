/*
 * System calls on the entries of one directory, made in one native call
 * relative to the directory's descriptor (the *at calls, with a single
 * entry name, never a path walked again from the root), off the event loop
 * (one I/O thread per environment; sweeps on libuv's pool): what fs-local's batch I/O did in worker threads with node's fs on
 * `<dir>/<name>` paths, without a worker's own JavaScript heap, and without
 * building a path, a Stats object and an exception per entry.
 *
 * run(op, dir, names, max, flags, count, partK, partN, data, callback)
 * makes one job of system calls on that thread and calls back on
 * the event loop with its answer (see answer() below and src/index.ts):
 *   read      the regular files `names` of the directory `dir` read whole
 *             (see readFiles below); `failed` when the directory cannot be
 *             opened;
 *   readAt    the same, in the directory opened at the path `dir` (links on
 *             the way followed by the kernel), only when its real location,
 *             read through its descriptor, is `dir` itself; `real` tells it;
 *   lstat     the lstat of `dir`/name for each name: `meta`, three doubles
 *             per name (mode, size, mtimeMs; NaN mode for a failed one), and
 *             `errors` [index, code, message];
 *   list      the names of the directory `dir` in readdir's order and their
 *             lstat as above; `more` (and no names) when it holds more than
 *             `max` entries;
 *   listAt    the same in the directory opened at the path `dir`, with
 *             `real`, its location read through its descriptor;
 *   sweep     see sweep() below;
 *   put       the file `dir` created (never an existing one: O_EXCL),
 *             written with the bytes of `data` and closed; removed again when
 *             writing or closing fails;
 *   replace   what `names[0]` holds (`replaced`: a regular file's size, else
 *             -1), then `dir` renamed onto it;
 *   putReplace  put, then replace; `step` tells which failed.
 * A job that fails as a whole answers `failed` {code, message}, the code
 * being the errno's name as node gives it.
 *
 * sweep(dir, skip, max, count, partK, partN) (synchronous; also a job of
 * run()): removes the files of the directory, the way `rm -rf` does.
 * Entries are taken in the order readdir gives them, skipping the names in
 * `skip` and, when partN > 0, those whose name hash modulo partN is not
 * partK (two threads sweeping the parts of one directory at once never
 * take the same entry; the hash is this file's, both parts must use it).
 * After `max` entries taken it stops and answers more = true. Each taken
 * entry:
 *   - a directory (by its type in the listing, or by fstatat when counted) is
 *     answered in `dirs`, not entered;
 *   - otherwise it is unlinked (a symbolic link itself, never its target);
 *     when `count` is set it is fstat'ed first (AT_SYMLINK_NOFOLLOW) and a
 *     regular file is answered in `files` with its size in `sizes`;
 *   - a failure is answered in `errors` as [name, code, message] (code: the
 *     errno's name, as node gives it: EISDIR, EPERM, ENOENT...).
 * A directory that cannot be opened or read throws an Error with `code`
 * (what was removed before a read failed is not answered).
 *
 * readFiles(dir, names, max, flags) (synchronous; also the read job of
 * run()): reads the regular files `names` of the directory whole, each
 * opened with openat(flags) (O_NOFOLLOW: a link fails with ELOOP), checked
 * with fstat, read with one byte more than its size (a file that grew since
 * is seen as such). Answers `meta`, five doubles per name (kind 0 read, 1
 * larger than `max`, 2 failed; then the offset of its bytes in `data`, their
 * length, mtimeMs and mode), `data`, the bytes of the files read one after
 * the other, and `errors`, [index, code, message] of each name that failed
 * (code NOTREG: not a regular file). A name holding a '/' fails with
 * EINVAL. A directory that cannot be opened throws.
 */
#define _GNU_SOURCE
#define NAPI_VERSION 8
#include <node_api.h>
#include <dirent.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHECK(call)                                 \
  do {                                              \
    if ((call) != napi_ok) goto napi_failed;        \
  } while (0)

enum op { OP_READ, OP_READ_AT, OP_LSTAT, OP_LIST, OP_LIST_AT, OP_SWEEP, OP_PUT, OP_REPLACE, OP_PUT_REPLACE };

static const char *const OP_NAMES[] = {"read", "readAt", "lstat", "list", "listAt", "sweep", "put", "replace", "putReplace"};
#define OP_COUNT (sizeof OP_NAMES / sizeof OP_NAMES[0])

/** A growing list of strings (each its own copy). */
typedef struct {
  char **v;
  uint32_t n, cap;
} strings;

/** A growing list of doubles. */
typedef struct {
  double *v;
  size_t n, cap;
} doubles;

/** One name that failed: by its index (reads, lstats) or by its name (sweeps). */
typedef struct {
  uint32_t index;
  char *name;
  const char *code;
  char *message;
} failure;

typedef struct {
  failure *v;
  uint32_t n, cap;
} failures;

/** One job: its arguments, then its answer (filled on another thread, turned into JavaScript on the event loop). */
typedef struct job {
  int op;
  char *dir;
  char **names;
  uint32_t nnames;
  double max;
  int flags;
  bool count;
  uint32_t partK, partN;
  /** put: the bytes (an ArrayBuffer held by `in_ref` until the job is over). */
  const uint8_t *in;
  size_t in_len;
  napi_ref in_ref;
  napi_ref callback;
  napi_async_work work;
  /** The next job queued for the I/O thread. */
  struct job *next;

  /** Memory ran out: the answer is a failure. */
  bool oom;
  /** read: five per name; lstat, list: three per name; sweep: the sizes of the files removed. */
  doubles meta;
  /** read: the bytes of the files read. */
  uint8_t *data;
  size_t total, cap;
  failures errors;
  /** list: the names; sweep: the regular files removed. */
  strings names_out;
  /** sweep: the subdirectories met. */
  strings dirs;
  bool more;
  /** readAt, listAt: where the directory opened really is. */
  char *real;
  /** The whole job failed: the errno's name and node's kind of message. */
  const char *failed_code;
  char *failed_message;
  /** putReplace: "put" or "replace", the step that failed. */
  const char *step;
  /** replace: the size of the regular file the destination held, or -1. */
  double replaced;
} job;

static const char *errno_name(int err) {
  const char *name = strerrorname_np(err);
  return name ? name : "EIO";
}

/** node's kind of message: `CODE: description, syscall 'path'` (the path being dir/name when a name is given). */
static char *errno_message(int err, const char *syscall, const char *dir, const char *name) {
  char text[128];
  const char *description = strerror_r(err, text, sizeof text);
  char message[PATH_MAX + 256];
  if (name) snprintf(message, sizeof message, "%s: %s, %s '%s/%s'", errno_name(err), description, syscall, dir, name);
  else snprintf(message, sizeof message, "%s: %s, %s '%s'", errno_name(err), description, syscall, dir);
  return strdup(message);
}

static bool strings_push(strings *s, const char *x) {
  if (s->n == s->cap) {
    uint32_t cap = s->cap ? s->cap * 2 : 64;
    char **grown = realloc(s->v, cap * sizeof(char *));
    if (!grown) return false;
    s->v = grown;
    s->cap = cap;
  }
  char *copy = strdup(x);
  if (!copy) return false;
  s->v[s->n++] = copy;
  return true;
}

static void strings_free(strings *s) {
  for (uint32_t i = 0; i < s->n; i++) free(s->v[i]);
  free(s->v);
  s->v = NULL;
  s->n = s->cap = 0;
}

static bool doubles_push(doubles *d, double x) {
  if (d->n == d->cap) {
    size_t cap = d->cap ? d->cap * 2 : 256;
    double *grown = realloc(d->v, cap * sizeof(double));
    if (!grown) return false;
    d->v = grown;
    d->cap = cap;
  }
  d->v[d->n++] = x;
  return true;
}

/** `n` doubles set to 0, the job's meta. */
static bool doubles_zeroed(doubles *d, size_t n) {
  d->v = calloc(n ? n : 1, sizeof(double));
  if (!d->v) return false;
  d->n = d->cap = n;
  return true;
}

/** Records a failed name (`message` is taken over); false when memory ran out. */
static bool failure_push(job *j, uint32_t index, const char *name, const char *code, char *message) {
  if (!message) return false;
  if (j->errors.n == j->errors.cap) {
    uint32_t cap = j->errors.cap ? j->errors.cap * 2 : 16;
    failure *grown = realloc(j->errors.v, cap * sizeof(failure));
    if (!grown) {
      free(message);
      return false;
    }
    j->errors.v = grown;
    j->errors.cap = cap;
  }
  char *copy = NULL;
  if (name && !(copy = strdup(name))) {
    free(message);
    return false;
  }
  j->errors.v[j->errors.n++] = (failure){index, copy, code, message};
  return true;
}

static bool failure_errno(job *j, uint32_t index, const char *name, const char *syscall, int err) {
  return failure_push(j, index, name, errno_name(err), errno_message(err, syscall, j->dir, name));
}

/** The whole job failed with `err` in `syscall` on `path`. */
static void job_failed(job *j, int err, const char *syscall, const char *path) {
  free(j->failed_message);
  j->failed_code = errno_name(err);
  j->failed_message = errno_message(err, syscall, path, NULL);
  if (!j->failed_message) j->oom = true;
}

/** Where the directory open at `fd` really is (read through /proc), or NULL with errno set. */
static char *real_location(int fd) {
  char link[64], target[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, target, sizeof target - 1);
  if (n < 0) return NULL;
  target[n] = 0;
  return strdup(target);
}

static int compare_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static uint32_t name_hash(const char *name) {
  uint32_t h = 0;
  for (const unsigned char *p = (const unsigned char *)name; *p; p++) h = h * 31u + *p;
  return h;
}

static bool is_dot(const char *name) {
  return name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0));
}

/** One name of a read that failed: meta kind 2 and an [index, code, message] entry. */
static bool read_failure(job *j, uint32_t i, const char *code, const char *message) {
  j->meta.v[5 * i] = 2;
  char *copy = strdup(message);
  return failure_push(j, i, NULL, code, copy);
}

static bool read_errno(job *j, uint32_t i, const char *syscall, int err) {
  j->meta.v[5 * i] = 2;
  return failure_push(j, i, NULL, errno_name(err), errno_message(err, syscall, j->dir, j->names[i]));
}

/** Reads the names of the job in the directory open at `dfd` (see readFiles above). */
static void read_in(job *j, int dfd) {
  if (!doubles_zeroed(&j->meta, 5 * (size_t)j->nnames)) {
    j->oom = true;
    return;
  }
  for (uint32_t i = 0; i < j->nnames && !j->oom; i++) {
    const char *name = j->names[i];
    if (strchr(name, '/') || name[0] == 0) {
      if (!read_failure(j, i, "EINVAL", "EINVAL: not one entry of the directory")) j->oom = true;
      continue;
    }
    int fd = openat(dfd, name, j->flags | O_CLOEXEC);
    if (fd < 0) {
      if (!read_errno(j, i, "open", errno)) j->oom = true;
      continue;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
      int err = errno;
      close(fd);
      if (!read_errno(j, i, "fstat", err)) j->oom = true;
      continue;
    }
    if (!S_ISREG(st.st_mode)) {
      close(fd);
      bool ok = S_ISDIR(st.st_mode) ? read_failure(j, i, "EISDIR", "is a directory") : read_failure(j, i, "NOTREG", "not a regular file");
      if (!ok) j->oom = true;
      continue;
    }
    if ((double)st.st_size > j->max) {
      close(fd);
      j->meta.v[5 * i] = 1;
      continue;
    }
    // one byte more than the size: a file that grew since is seen as such
    size_t want = (size_t)st.st_size + 1;
    if (j->total + want > j->cap) {
      size_t grown = j->cap ? j->cap : 64 * 1024;
      while (grown < j->total + want) grown *= 2;
      uint8_t *bigger = realloc(j->data, grown);
      if (!bigger) {
        close(fd);
        j->oom = true;
        return;
      }
      j->data = bigger;
      j->cap = grown;
    }
    size_t got = 0;
    int err = 0;
    while (got < want) {
      ssize_t r = pread(fd, j->data + j->total + got, want - got, (off_t)got);
      if (r < 0) {
        if (errno == EINTR) continue;
        err = errno;
        break;
      }
      if (r == 0) break;
      got += (size_t)r;
    }
    close(fd);
    if (err) {
      if (!read_errno(j, i, "read", err)) j->oom = true;
      continue;
    }
    if ((double)got > j->max || got == want) {
      j->meta.v[5 * i] = 1;
      continue;
    }
    j->meta.v[5 * i] = 0;
    j->meta.v[5 * i + 1] = (double)j->total;
    j->meta.v[5 * i + 2] = (double)got;
    j->meta.v[5 * i + 3] = (double)st.st_mtim.tv_sec * 1e3 + (double)st.st_mtim.tv_nsec / 1e6;
    j->meta.v[5 * i + 4] = (double)st.st_mode;
    j->total += got;
  }
}

/** mode, size and mtimeMs of `st` at `at` of the job's meta. */
static void put_stat(job *j, size_t at, const struct stat *st) {
  j->meta.v[at] = (double)st->st_mode;
  j->meta.v[at + 1] = (double)st->st_size;
  j->meta.v[at + 2] = (double)st->st_mtim.tv_sec * 1e3 + (double)st->st_mtim.tv_nsec / 1e6;
}

/** The lstat of dir/name for each name of the job. */
static void lstat_names(job *j) {
  if (!doubles_zeroed(&j->meta, 3 * (size_t)j->nnames)) {
    j->oom = true;
    return;
  }
  size_t dlen = strlen(j->dir);
  for (uint32_t i = 0; i < j->nnames && !j->oom; i++) {
    size_t nlen = strlen(j->names[i]);
    char *p = malloc(dlen + nlen + 2);
    if (!p) {
      j->oom = true;
      return;
    }
    memcpy(p, j->dir, dlen);
    p[dlen] = '/';
    memcpy(p + dlen + 1, j->names[i], nlen + 1);
    struct stat st;
    if (lstat(p, &st) == 0) put_stat(j, 3 * (size_t)i, &st);
    else {
      int err = errno;
      j->meta.v[3 * (size_t)i] = NAN;
      if (!failure_push(j, i, NULL, errno_name(err), errno_message(err, "lstat", j->dir, j->names[i]))) j->oom = true;
    }
    free(p);
  }
}

/** The entries of the directory open at `dfd` (taken over) and their lstat; `label` names it in failures. */
static void list_in(job *j, int dfd, const char *label) {
  DIR *d = fdopendir(dfd);
  if (!d) {
    int err = errno;
    close(dfd);
    job_failed(j, err, "opendir", label);
    return;
  }
  for (;;) {
    errno = 0;
    struct dirent *e = readdir(d);
    if (!e) {
      if (errno != 0) {
        job_failed(j, errno, "scandir", label);
        strings_free(&j->names_out);
      }
      break;
    }
    if (is_dot(e->d_name)) continue;
    if ((double)j->names_out.n >= j->max) {
      // more than asked for: nothing is stat'ed, the caller reads it in pages
      j->more = true;
      strings_free(&j->names_out);
      break;
    }
    if (!strings_push(&j->names_out, e->d_name)) {
      j->oom = true;
      break;
    }
  }
  if (!j->more && !j->failed_code && !j->oom) {
    if (!doubles_zeroed(&j->meta, 3 * (size_t)j->names_out.n)) j->oom = true;
    for (uint32_t i = 0; i < j->names_out.n && !j->oom; i++) {
      struct stat st;
      if (fstatat(dirfd(d), j->names_out.v[i], &st, AT_SYMLINK_NOFOLLOW) == 0) put_stat(j, 3 * (size_t)i, &st);
      else {
        int err = errno;
        j->meta.v[3 * (size_t)i] = NAN;
        if (!failure_push(j, i, NULL, errno_name(err), errno_message(err, "lstat", label, j->names_out.v[i]))) j->oom = true;
      }
    }
  }
  closedir(d);
}

static void sweep_dir(job *j) {
  qsort(j->names, j->nnames, sizeof(char *), compare_names);
  int fd = open(j->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = fd < 0 ? NULL : fdopendir(fd);
  if (!d) {
    int err = errno;
    if (fd >= 0) close(fd);
    job_failed(j, err, "opendir", j->dir);
    return;
  }
  int dfd = dirfd(d);
  double taken = 0;
  while (!j->oom) {
    errno = 0;
    struct dirent *e = readdir(d);
    if (!e) {
      // a listing that fails midway fails the sweep (the caller removes what is left another way)
      if (errno != 0) job_failed(j, errno, "scandir", j->dir);
      break;
    }
    const char *name = e->d_name;
    if (is_dot(name)) continue;
    if (j->nnames && bsearch(&name, j->names, j->nnames, sizeof(char *), compare_names)) continue;
    if (j->partN > 0 && name_hash(name) % j->partN != j->partK) continue;
    if (taken >= j->max) {
      j->more = true;
      break;
    }
    taken++;
    if (e->d_type == DT_DIR) {
      if (!strings_push(&j->dirs, name)) j->oom = true;
      continue;
    }
    struct stat st;
    if (j->count) {
      if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (!failure_errno(j, 0, name, "lstat", errno)) j->oom = true;
        continue;
      }
      if (S_ISDIR(st.st_mode)) {
        if (!strings_push(&j->dirs, name)) j->oom = true;
        continue;
      }
    }
    if (unlinkat(dfd, name, 0) != 0) {
      if (!failure_errno(j, 0, name, "unlink", errno)) j->oom = true;
      continue;
    }
    if (j->count && S_ISREG(st.st_mode) && !(strings_push(&j->names_out, name) && doubles_push(&j->meta, (double)st.st_size))) j->oom = true;
  }
  closedir(d);
}

/** put: the file `dir` created, written and closed (removed again on a failure); false when it failed. */
static bool put_file(job *j) {
  int fd = open(j->dir, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    job_failed(j, errno, "open", j->dir);
    return false;
  }
  size_t at = 0;
  int err = 0;
  while (at < j->in_len) {
    ssize_t w = write(fd, j->in + at, j->in_len - at);
    if (w < 0) {
      if (errno == EINTR) continue;
      err = errno;
      break;
    }
    at += (size_t)w;
  }
  if (err) {
    close(fd);
    unlink(j->dir);
    job_failed(j, err, "write", j->dir);
    return false;
  }
  if (close(fd) != 0) {
    err = errno;
    unlink(j->dir);
    job_failed(j, err, "close", j->dir);
    return false;
  }
  return true;
}

/** replace: what names[0] holds, then `dir` renamed onto it; false when it failed. */
static bool replace_file(job *j) {
  const char *to = j->names[0];
  j->replaced = -1;
  struct stat st;
  if (lstat(to, &st) == 0) {
    if (S_ISREG(st.st_mode)) j->replaced = (double)st.st_size;
  } else if (errno != ENOENT) {
    job_failed(j, errno, "lstat", to);
    return false;
  }
  if (rename(j->dir, to) != 0) {
    job_failed(j, errno, "rename", j->dir);
    return false;
  }
  return true;
}

/** The directory at the path `dir`, opened (links followed), with its real location in `real`; -1 when it failed. */
static int open_located(job *j) {
  int dfd = open(j->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) {
    job_failed(j, errno, "open", j->dir);
    return -1;
  }
  j->real = real_location(dfd);
  if (!j->real) {
    job_failed(j, errno, "readlink", j->dir);
    close(dfd);
    return -1;
  }
  return dfd;
}

/** The system calls of a job (on the I/O thread or a thread of libuv's pool: no JavaScript here). */
static void run_job(job *j) {
  switch (j->op) {
    case OP_READ: {
      int dfd = open(j->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (dfd < 0) {
        job_failed(j, errno, "opendir", j->dir);
        return;
      }
      read_in(j, dfd);
      close(dfd);
      return;
    }
    case OP_READ_AT: {
      int dfd = open_located(j);
      if (dfd < 0) return;
      // read only where the caller expects the directory to be (anywhere else, nothing is opened in it)
      if (strcmp(j->real, j->dir) == 0) read_in(j, dfd);
      close(dfd);
      return;
    }
    case OP_LSTAT:
      lstat_names(j);
      return;
    case OP_LIST: {
      int dfd = open(j->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (dfd < 0) {
        job_failed(j, errno, "opendir", j->dir);
        return;
      }
      list_in(j, dfd, j->dir);
      return;
    }
    case OP_LIST_AT: {
      int dfd = open_located(j);
      if (dfd >= 0) list_in(j, dfd, j->dir);
      return;
    }
    case OP_SWEEP:
      sweep_dir(j);
      return;
    case OP_PUT:
      put_file(j);
      return;
    case OP_REPLACE:
      replace_file(j);
      return;
    case OP_PUT_REPLACE:
      if (!put_file(j)) j->step = "put";
      else if (!replace_file(j)) j->step = "replace";
      return;
  }
}

static void job_free(napi_env env, job *j) {
  if (!j) return;
  if (env && j->in_ref) napi_delete_reference(env, j->in_ref);
  if (env && j->callback) napi_delete_reference(env, j->callback);
  if (env && j->work) napi_delete_async_work(env, j->work);
  free(j->dir);
  for (uint32_t i = 0; i < j->nnames; i++) free(j->names[i]);
  free(j->names);
  free(j->meta.v);
  free(j->data);
  for (uint32_t i = 0; i < j->errors.n; i++) {
    free(j->errors.v[i].name);
    free(j->errors.v[i].message);
  }
  free(j->errors.v);
  strings_free(&j->names_out);
  strings_free(&j->dirs);
  free(j->real);
  free(j->failed_message);
  free(j);
}

/** After a failed N-API call: the exception it left, or one saying what went wrong. */
static void throw_unless_pending(napi_env env) {
  bool pending = false;
  napi_is_exception_pending(env, &pending);
  if (!pending) napi_throw_error(env, "EIO", "dir-calls: out of memory or a bad argument");
}

/** A new ArrayBuffer holding a copy of `len` bytes at `src`. */
static napi_status array_buffer_copy(napi_env env, const void *src, size_t len, napi_value *out) {
  void *bytes;
  napi_status status = napi_create_arraybuffer(env, len, &bytes, out);
  if (status == napi_ok && len) memcpy(bytes, src, len);
  return status;
}

static napi_status set_string(napi_env env, napi_value obj, const char *key, const char *s) {
  napi_value v;
  napi_status st = napi_create_string_utf8(env, s, NAPI_AUTO_LENGTH, &v);
  return st != napi_ok ? st : napi_set_named_property(env, obj, key, v);
}

static napi_status string_array(napi_env env, const strings *s, napi_value *out) {
  napi_status st = napi_create_array_with_length(env, s->n, out);
  for (uint32_t i = 0; st == napi_ok && i < s->n; i++) {
    napi_value v;
    if ((st = napi_create_string_utf8(env, s->v[i], NAPI_AUTO_LENGTH, &v)) == napi_ok) st = napi_set_element(env, *out, i, v);
  }
  return st;
}

/** [index or name, code, message] of each failed name. */
static napi_status failure_array(napi_env env, const failures *f, napi_value *out) {
  napi_status st = napi_create_array_with_length(env, f->n, out);
  for (uint32_t i = 0; st == napi_ok && i < f->n; i++) {
    napi_value triple, v;
    if ((st = napi_create_array_with_length(env, 3, &triple)) != napi_ok) break;
    st = f->v[i].name ? napi_create_string_utf8(env, f->v[i].name, NAPI_AUTO_LENGTH, &v) : napi_create_uint32(env, f->v[i].index, &v);
    if (st != napi_ok || (st = napi_set_element(env, triple, 0, v)) != napi_ok) break;
    if ((st = napi_create_string_utf8(env, f->v[i].code, NAPI_AUTO_LENGTH, &v)) != napi_ok || (st = napi_set_element(env, triple, 1, v)) != napi_ok) break;
    if ((st = napi_create_string_utf8(env, f->v[i].message, NAPI_AUTO_LENGTH, &v)) != napi_ok || (st = napi_set_element(env, triple, 2, v)) != napi_ok) break;
    st = napi_set_element(env, *out, i, triple);
  }
  return st;
}

/**
 * The job's answer as JavaScript: read: meta, data, errors (and real);
 * lstat: meta, errors; list: names, meta, errors, more (and real); sweep:
 * files, sizes, dirs, errors, more; put, replace: replaced, step; failed
 * {code, message} when the whole job failed. NULL with an exception pending.
 */
static napi_value answer(napi_env env, job *j) {
  napi_value result, v;
  CHECK(napi_create_object(env, &result));
  if (j->oom) {
    CHECK(napi_create_object(env, &v));
    CHECK(set_string(env, v, "code", "ENOMEM"));
    CHECK(set_string(env, v, "message", "ENOMEM: out of memory, dir-calls"));
    CHECK(napi_set_named_property(env, result, "failed", v));
    return result;
  }
  if (j->failed_code) {
    CHECK(napi_create_object(env, &v));
    CHECK(set_string(env, v, "code", j->failed_code));
    CHECK(set_string(env, v, "message", j->failed_message ? j->failed_message : j->failed_code));
    CHECK(napi_set_named_property(env, result, "failed", v));
    if (j->step) CHECK(set_string(env, result, "step", j->step));
  }
  if (j->real) CHECK(set_string(env, result, "real", j->real));
  switch (j->op) {
    case OP_READ:
    case OP_READ_AT:
    case OP_LSTAT:
    case OP_LIST:
    case OP_LIST_AT:
      CHECK(array_buffer_copy(env, j->meta.v, j->meta.n * sizeof(double), &v));
      CHECK(napi_set_named_property(env, result, "meta", v));
      CHECK(failure_array(env, &j->errors, &v));
      CHECK(napi_set_named_property(env, result, "errors", v));
      if (j->op == OP_READ || j->op == OP_READ_AT) {
        CHECK(array_buffer_copy(env, j->data, j->total, &v));
        CHECK(napi_set_named_property(env, result, "data", v));
      }
      if (j->op == OP_LIST || j->op == OP_LIST_AT) {
        CHECK(string_array(env, &j->names_out, &v));
        CHECK(napi_set_named_property(env, result, "names", v));
        CHECK(napi_get_boolean(env, j->more, &v));
        CHECK(napi_set_named_property(env, result, "more", v));
      }
      break;
    case OP_SWEEP:
      CHECK(string_array(env, &j->names_out, &v));
      CHECK(napi_set_named_property(env, result, "files", v));
      CHECK(array_buffer_copy(env, j->meta.v, j->meta.n * sizeof(double), &v));
      CHECK(napi_set_named_property(env, result, "sizes", v));
      CHECK(string_array(env, &j->dirs, &v));
      CHECK(napi_set_named_property(env, result, "dirs", v));
      CHECK(failure_array(env, &j->errors, &v));
      CHECK(napi_set_named_property(env, result, "errors", v));
      CHECK(napi_get_boolean(env, j->more, &v));
      CHECK(napi_set_named_property(env, result, "more", v));
      break;
    default:
      CHECK(napi_create_double(env, j->replaced, &v));
      CHECK(napi_set_named_property(env, result, "replaced", v));
      break;
  }
  return result;
napi_failed:
  throw_unless_pending(env);
  return NULL;
}

/** A string argument copied into a new buffer (NULL on failure). */
static char *string_arg(napi_env env, napi_value v) {
  size_t len;
  if (napi_get_value_string_utf8(env, v, NULL, 0, &len) != napi_ok) return NULL;
  char *s = malloc(len + 1);
  if (!s) return NULL;
  if (napi_get_value_string_utf8(env, v, s, len + 1, &len) != napi_ok) {
    free(s);
    return NULL;
  }
  return s;
}

/** A new job of `op` with the directory `argv[0]` and the names `argv[1]`; NULL with an exception pending. */
static job *new_job(napi_env env, int op, napi_value dir, napi_value names) {
  job *j = calloc(1, sizeof(job));
  if (!j) goto napi_failed;
  j->op = op;
  j->replaced = -1;
  j->dir = string_arg(env, dir);
  if (!j->dir) goto napi_failed;
  CHECK(napi_get_array_length(env, names, &j->nnames));
  j->names = calloc(j->nnames ? j->nnames : 1, sizeof(char *));
  if (!j->names) goto napi_failed;
  for (uint32_t i = 0; i < j->nnames; i++) {
    napi_value v;
    CHECK(napi_get_element(env, names, i, &v));
    j->names[i] = string_arg(env, v);
    if (!j->names[i]) goto napi_failed;
  }
  return j;
napi_failed:
  throw_unless_pending(env);
  job_free(NULL, j);
  return NULL;
}

/** The arguments of a call, all `wanted` of them required (else a TypeError naming `usage`). */
static bool call_args(napi_env env, napi_callback_info info, size_t wanted, napi_value *argv, const char *usage) {
  size_t argc = wanted;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) {
    throw_unless_pending(env);
    return false;
  }
  if (argc < wanted) {
    napi_throw_type_error(env, NULL, usage);
    return false;
  }
  return true;
}

/** Runs a job here and now; throws (with its code) when it failed as a whole. */
static napi_value run_sync(napi_env env, job *j) {
  run_job(j);
  napi_value result = NULL;
  if (j->oom) napi_throw_error(env, "ENOMEM", "ENOMEM: out of memory, dir-calls");
  else if (j->failed_code) {
    napi_value msg, code, error;
    if (napi_create_string_utf8(env, j->failed_message ? j->failed_message : j->failed_code, NAPI_AUTO_LENGTH, &msg) == napi_ok &&
        napi_create_string_utf8(env, j->failed_code, NAPI_AUTO_LENGTH, &code) == napi_ok && napi_create_error(env, code, msg, &error) == napi_ok) {
      napi_set_named_property(env, error, "code", code);
      napi_throw(env, error);
    } else throw_unless_pending(env);
  } else result = answer(env, j);
  job_free(env, j);
  return result;
}

static napi_value sweep(napi_env env, napi_callback_info info) {
  napi_value argv[6];
  if (!call_args(env, info, 6, argv, "sweep(dir, skip, max, count, partK, partN)")) return NULL;
  job *j = new_job(env, OP_SWEEP, argv[0], argv[1]);
  if (!j) return NULL;
  CHECK(napi_get_value_double(env, argv[2], &j->max));
  CHECK(napi_get_value_bool(env, argv[3], &j->count));
  CHECK(napi_get_value_uint32(env, argv[4], &j->partK));
  CHECK(napi_get_value_uint32(env, argv[5], &j->partN));
  return run_sync(env, j);
napi_failed:
  throw_unless_pending(env);
  job_free(env, j);
  return NULL;
}

static napi_value read_files(napi_env env, napi_callback_info info) {
  napi_value argv[4];
  if (!call_args(env, info, 4, argv, "readFiles(dir, names, max, flags)")) return NULL;
  job *j = new_job(env, OP_READ, argv[0], argv[1]);
  if (!j) return NULL;
  CHECK(napi_get_value_double(env, argv[2], &j->max));
  CHECK(napi_get_value_int32(env, argv[3], &j->flags));
  return run_sync(env, j);
napi_failed:
  throw_unless_pending(env);
  job_free(env, j);
  return NULL;
}

/** The job's answer to its callback, on the event loop; then the job is freed. */
static void call_back(napi_env env, job *j) {
  napi_value callback, result, undefined;
  result = answer(env, j);
  if (!result) {
    // the answer could not be built: the caller still hears of it
    napi_value ignored;
    napi_get_and_clear_last_exception(env, &ignored);
    j->oom = true;
    result = answer(env, j);
  }
  if (result && napi_get_reference_value(env, j->callback, &callback) == napi_ok && napi_get_undefined(env, &undefined) == napi_ok) {
    napi_call_function(env, undefined, callback, 1, &result, NULL);
  }
  job_free(env, j);
}

/*
 * The I/O thread of a node environment (one per thread that loaded the
 * addon, started on its first job): it takes the queued jobs one after the
 * other and hands each answer back through a thread-safe function. Jobs that
 * queue up while it works are taken without waking it again, and answers
 * that pile up reach the event loop in one wake-up: on a busy 2-core
 * machine, 16 small downloads at once through libuv's pool (a thread woken
 * per job, four of them competing with the event loop for the cores) cost
 * the server 15-30% more CPU per request than one thread taking them in
 * turn. Sweeps, the large jobs whose parts are meant to run at once, go to
 * libuv's pool instead.
 */
typedef struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  job *head, *tail;
  bool started, stopping;
  pthread_t thread;
  napi_threadsafe_function tsfn;
  /** Jobs given to the thread and not yet called back (event loop only): the environment is kept alive while there are some. */
  uint32_t pending;
} io_thread;

static void *io_main(void *arg) {
  io_thread *t = arg;
  pthread_mutex_lock(&t->mu);
  for (;;) {
    while (!t->head && !t->stopping) pthread_cond_wait(&t->cv, &t->mu);
    if (t->stopping) break;
    job *j = t->head;
    t->head = j->next;
    if (!t->head) t->tail = NULL;
    pthread_mutex_unlock(&t->mu);
    run_job(j);
    // the queue of answers is unbounded: this never waits for the event loop
    if (napi_call_threadsafe_function(t->tsfn, j, napi_tsfn_nonblocking) != napi_ok) job_free(NULL, j);
    pthread_mutex_lock(&t->mu);
  }
  pthread_mutex_unlock(&t->mu);
  return NULL;
}

/** An answer of the I/O thread, on the event loop (env NULL: the environment is going away). */
static void io_answered(napi_env env, napi_value js_callback, void *context, void *data) {
  (void)js_callback;
  io_thread *t = context;
  job *j = data;
  if (!env) {
    job_free(NULL, j);
    return;
  }
  if (--t->pending == 0) napi_unref_threadsafe_function(env, t->tsfn);
  call_back(env, j);
}

/** The environment is going away: the thread is stopped (jobs still queued are dropped). */
static void io_thread_end(napi_env env, void *data, void *hint) {
  (void)hint;
  io_thread *t = data;
  if (t->started) {
    pthread_mutex_lock(&t->mu);
    t->stopping = true;
    pthread_cond_signal(&t->cv);
    pthread_mutex_unlock(&t->mu);
    pthread_join(t->thread, NULL);
    napi_release_threadsafe_function(t->tsfn, napi_tsfn_abort);
  }
  for (job *j = t->head; j;) {
    job *next = j->next;
    job_free(env, j);
    j = next;
  }
  pthread_cond_destroy(&t->cv);
  pthread_mutex_destroy(&t->mu);
  free(t);
}

/** The environment's I/O thread, started when needed; NULL with an exception pending. */
static io_thread *io_thread_of(napi_env env) {
  io_thread *t = NULL;
  if (napi_get_instance_data(env, (void **)&t) != napi_ok) goto napi_failed;
  if (t && t->started) return t;
  if (!t) {
    t = calloc(1, sizeof(io_thread));
    if (!t) goto napi_failed;
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->cv, NULL);
    if (napi_set_instance_data(env, t, io_thread_end, NULL) != napi_ok) {
      pthread_cond_destroy(&t->cv);
      pthread_mutex_destroy(&t->mu);
      free(t);
      goto napi_failed;
    }
  }
  napi_value name;
  CHECK(napi_create_string_utf8(env, "ferry:dir-calls", NAPI_AUTO_LENGTH, &name));
  CHECK(napi_create_threadsafe_function(env, NULL, NULL, name, 0, 1, NULL, NULL, t, io_answered, &t->tsfn));
  // an idle thread keeps nothing alive (see pending)
  CHECK(napi_unref_threadsafe_function(env, t->tsfn));
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  // its calls need a few KB of stack (paths and messages)
  pthread_attr_setstacksize(&attr, 256 * 1024);
  int err = pthread_create(&t->thread, &attr, io_main, t);
  pthread_attr_destroy(&attr);
  if (err) {
    napi_release_threadsafe_function(t->tsfn, napi_tsfn_abort);
    napi_throw_error(env, errno_name(err), "dir-calls: cannot start the I/O thread");
    return NULL;
  }
  t->started = true;
  return t;
napi_failed:
  throw_unless_pending(env);
  return NULL;
}

static void execute(napi_env env, void *data) {
  (void)env;
  run_job((job *)data);
}

static void complete(napi_env env, napi_status status, void *data) {
  job *j = data;
  if (status != napi_ok) j->oom = true;
  call_back(env, j);
}

static napi_value run(napi_env env, napi_callback_info info) {
  napi_value argv[10];
  if (!call_args(env, info, 10, argv, "run(op, dir, names, max, flags, count, partK, partN, data, callback)")) return NULL;
  char op_name[16];
  size_t len;
  int op = -1;
  if (napi_get_value_string_utf8(env, argv[0], op_name, sizeof op_name, &len) == napi_ok) {
    for (size_t i = 0; i < OP_COUNT; i++)
      if (strcmp(op_name, OP_NAMES[i]) == 0) op = (int)i;
  }
  if (op < 0) {
    napi_throw_type_error(env, NULL, "run: unknown operation");
    return NULL;
  }
  napi_valuetype type;
  if (napi_typeof(env, argv[9], &type) != napi_ok || type != napi_function) {
    napi_throw_type_error(env, NULL, "run: the callback must be a function");
    return NULL;
  }
  job *j = new_job(env, op, argv[1], argv[2]);
  if (!j) return NULL;
  if ((op == OP_REPLACE || op == OP_PUT_REPLACE) && j->nnames < 1) {
    job_free(env, j);
    napi_throw_type_error(env, NULL, "run: replace needs the destination as its one name");
    return NULL;
  }
  CHECK(napi_get_value_double(env, argv[3], &j->max));
  CHECK(napi_get_value_int32(env, argv[4], &j->flags));
  CHECK(napi_get_value_bool(env, argv[5], &j->count));
  CHECK(napi_get_value_uint32(env, argv[6], &j->partK));
  CHECK(napi_get_value_uint32(env, argv[7], &j->partN));
  if (op == OP_PUT || op == OP_PUT_REPLACE) {
    bool is_buffer = false;
    CHECK(napi_is_arraybuffer(env, argv[8], &is_buffer));
    if (!is_buffer) {
      job_free(env, j);
      napi_throw_type_error(env, NULL, "run: put needs its bytes as an ArrayBuffer");
      return NULL;
    }
    void *bytes;
    CHECK(napi_get_arraybuffer_info(env, argv[8], &bytes, &j->in_len));
    j->in = bytes;
    CHECK(napi_create_reference(env, argv[8], 1, &j->in_ref));
  }
  CHECK(napi_create_reference(env, argv[9], 1, &j->callback));
  if (op == OP_SWEEP) {
    napi_value name;
    CHECK(napi_create_string_utf8(env, "ferry:dir-calls", NAPI_AUTO_LENGTH, &name));
    CHECK(napi_create_async_work(env, NULL, name, execute, complete, j, &j->work));
    CHECK(napi_queue_async_work(env, j->work));
    return NULL;
  }
  io_thread *t = io_thread_of(env);
  if (!t) {
    job_free(env, j);
    return NULL;
  }
  if (t->pending++ == 0) CHECK(napi_ref_threadsafe_function(env, t->tsfn));
  pthread_mutex_lock(&t->mu);
  if (t->tail) t->tail->next = j;
  else t->head = j;
  t->tail = j;
  pthread_cond_signal(&t->cv);
  pthread_mutex_unlock(&t->mu);
  return NULL;
napi_failed:
  throw_unless_pending(env);
  job_free(env, j);
  return NULL;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  if (napi_create_function(env, "sweep", NAPI_AUTO_LENGTH, sweep, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "sweep", fn) != napi_ok) return NULL;
  if (napi_create_function(env, "readFiles", NAPI_AUTO_LENGTH, read_files, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "readFiles", fn) != napi_ok) return NULL;
  if (napi_create_function(env, "run", NAPI_AUTO_LENGTH, run, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "run", fn) != napi_ok) return NULL;
  return exports;
}
