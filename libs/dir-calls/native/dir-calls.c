/*
 * System calls on the entries of one directory, made in one native call
 * relative to the directory's descriptor (the *at calls, with a single
 * entry name, never a path walked again from the root): what fs-local's
 * batch I/O workers did with node's fs on `<dir>/<name>` paths, without
 * building a path, a Stats object and an exception per entry.
 *
 * sweep(dir, skip, max, count, partK, partN): removes the files of the
 * directory, the way `rm -rf` does. Entries are taken in the order readdir
 * gives them, skipping the names in `skip` and, when partN > 0, those whose
 * name hash modulo partN is not partK (two threads sweeping the parts of one
 * directory at once never take the same entry; the hash is this file's,
 * both parts must use it). After `max` entries taken it stops and answers
 * more = true. Each taken entry:
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
 * readFiles(dir, names, max, flags): reads the regular files `names` of the
 * directory whole, each opened with openat(flags) (O_NOFOLLOW: a link fails
 * with ELOOP), checked with fstat, read with one byte more than its size (a
 * file that grew since is seen as such). Answers `meta`, five doubles per
 * name (kind 0 read, 1 larger than `max`, 2 failed; then the offset of its
 * bytes in `data`, their length, mtimeMs and mode), `data`, the bytes of the
 * files read one after the other, and `errors`, [index, code, message] of
 * each name that failed (code NOTREG: not a regular file). A name holding a
 * '/' fails with EINVAL. A directory that cannot be opened throws.
 */
#define _GNU_SOURCE
#define NAPI_VERSION 8
#include <node_api.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

static const char *errno_name(int err) {
  const char *name = strerrorname_np(err);
  return name ? name : "EIO";
}

/** After a failed N-API call: the exception it left, or one saying what went wrong. */
static void throw_unless_pending(napi_env env) {
  bool pending = false;
  napi_is_exception_pending(env, &pending);
  if (!pending) napi_throw_error(env, "EIO", "dir-calls: out of memory or a bad argument");
}

/** A new ArrayBuffer holding a copy of `len` bytes at `src` (the answers' sizes, metadata and file bytes). */
static napi_status array_buffer_copy(napi_env env, const void *src, size_t len, napi_value *out) {
  void *bytes;
  napi_status status = napi_create_arraybuffer(env, len, &bytes, out);
  if (status == napi_ok && len) memcpy(bytes, src, len);
  return status;
}

/** Throws an Error as node's fs would: `code` set, the message naming the call and the path. */
static void throw_errno(napi_env env, int err, const char *syscall, const char *path) {
  char message[512];
  snprintf(message, sizeof message, "%s: %s, %s '%s'", errno_name(err), strerror(err), syscall, path);
  napi_value msg, code, error;
  if (napi_create_string_utf8(env, message, NAPI_AUTO_LENGTH, &msg) != napi_ok) return;
  if (napi_create_string_utf8(env, errno_name(err), NAPI_AUTO_LENGTH, &code) != napi_ok) return;
  if (napi_create_error(env, code, msg, &error) != napi_ok) return;
  napi_set_named_property(env, error, "code", code);
  napi_throw(env, error);
}

static int compare_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static uint32_t name_hash(const char *name) {
  uint32_t h = 0;
  for (const unsigned char *p = (const unsigned char *)name; *p; p++) h = h * 31u + *p;
  return h;
}

static napi_status push_string(napi_env env, napi_value array, uint32_t *n, const char *s) {
  napi_value v;
  napi_status st = napi_create_string_utf8(env, s, NAPI_AUTO_LENGTH, &v);
  if (st != napi_ok) return st;
  return napi_set_element(env, array, (*n)++, v);
}

static napi_status push_error(napi_env env, napi_value errors, uint32_t *n, const char *dir, const char *name, const char *syscall, int err) {
  napi_value triple, v;
  napi_status st = napi_create_array_with_length(env, 3, &triple);
  if (st != napi_ok) return st;
  if ((st = napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &v)) != napi_ok) return st;
  if ((st = napi_set_element(env, triple, 0, v)) != napi_ok) return st;
  if ((st = napi_create_string_utf8(env, errno_name(err), NAPI_AUTO_LENGTH, &v)) != napi_ok) return st;
  if ((st = napi_set_element(env, triple, 1, v)) != napi_ok) return st;
  char message[512];
  snprintf(message, sizeof message, "%s: %s, %s '%s/%s'", errno_name(err), strerror(err), syscall, dir, name);
  if ((st = napi_create_string_utf8(env, message, NAPI_AUTO_LENGTH, &v)) != napi_ok) return st;
  if ((st = napi_set_element(env, triple, 2, v)) != napi_ok) return st;
  return napi_set_element(env, errors, (*n)++, triple);
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

/**
 * The arguments of a call (all `*argc` of them required, else a TypeError
 * naming `usage`) and its first one, the directory's path, in a new buffer;
 * NULL with an exception pending on failure.
 */
static char *dir_call_args(napi_env env, napi_callback_info info, size_t *argc, napi_value *argv, const char *usage) {
  size_t wanted = *argc;
  if (napi_get_cb_info(env, info, argc, argv, NULL, NULL) != napi_ok) {
    throw_unless_pending(env);
    return NULL;
  }
  if (*argc < wanted) {
    napi_throw_type_error(env, NULL, usage);
    return NULL;
  }
  char *dir = string_arg(env, argv[0]);
  if (!dir) throw_unless_pending(env);
  return dir;
}

static napi_value sweep(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value argv[6];
  char *dir = NULL;
  char **skip = NULL;
  uint32_t nskip = 0;
  DIR *d = NULL;
  double *sizes = NULL;
  size_t nsizes = 0, capsizes = 0;
  napi_value result = NULL;

  dir = dir_call_args(env, info, &argc, argv, "sweep(dir, skip, max, count, partK, partN)");
  if (!dir) return NULL;
  CHECK(napi_get_array_length(env, argv[1], &nskip));
  skip = calloc(nskip ? nskip : 1, sizeof(char *));
  if (!skip) goto napi_failed;
  for (uint32_t i = 0; i < nskip; i++) {
    napi_value v;
    CHECK(napi_get_element(env, argv[1], i, &v));
    skip[i] = string_arg(env, v);
    if (!skip[i]) goto napi_failed;
  }
  qsort(skip, nskip, sizeof(char *), compare_names);
  double maxd;
  bool count;
  uint32_t partK, partN;
  CHECK(napi_get_value_double(env, argv[2], &maxd));
  CHECK(napi_get_value_bool(env, argv[3], &count));
  CHECK(napi_get_value_uint32(env, argv[4], &partK));
  CHECK(napi_get_value_uint32(env, argv[5], &partN));

  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || !(d = fdopendir(fd))) {
    int err = errno;
    if (fd >= 0) close(fd);
    throw_errno(env, err, "opendir", dir);
    goto done;
  }
  int dfd = dirfd(d);

  napi_value files, dirs, errors;
  uint32_t nfiles = 0, ndirs = 0, nerrors = 0;
  CHECK(napi_create_array(env, &files));
  CHECK(napi_create_array(env, &dirs));
  CHECK(napi_create_array(env, &errors));
  bool more = false;
  double taken = 0;
  for (;;) {
    errno = 0;
    struct dirent *e = readdir(d);
    if (!e) {
      // a listing that fails midway fails the sweep (the caller removes what is left another way)
      if (errno != 0) {
        throw_errno(env, errno, "scandir", dir);
        goto done;
      }
      break;
    }
    const char *name = e->d_name;
    if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
    if (nskip && bsearch(&name, skip, nskip, sizeof(char *), compare_names)) continue;
    if (partN > 0 && name_hash(name) % partN != partK) continue;
    if (taken >= maxd) {
      more = true;
      break;
    }
    taken++;
    if (e->d_type == DT_DIR) {
      CHECK(push_string(env, dirs, &ndirs, name));
      continue;
    }
    struct stat st;
    if (count) {
      if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        CHECK(push_error(env, errors, &nerrors, dir, name, "lstat", errno));
        continue;
      }
      if (S_ISDIR(st.st_mode)) {
        CHECK(push_string(env, dirs, &ndirs, name));
        continue;
      }
    }
    if (unlinkat(dfd, name, 0) != 0) {
      CHECK(push_error(env, errors, &nerrors, dir, name, "unlink", errno));
      continue;
    }
    if (count && S_ISREG(st.st_mode)) {
      CHECK(push_string(env, files, &nfiles, name));
      if (nsizes == capsizes) {
        size_t cap = capsizes ? capsizes * 2 : 256;
        double *grown = realloc(sizes, cap * sizeof(double));
        if (!grown) goto napi_failed;
        sizes = grown;
        capsizes = cap;
      }
      sizes[nsizes++] = (double)st.st_size;
    }
  }

  napi_value buffer, morev;
  CHECK(array_buffer_copy(env, sizes, nsizes * sizeof(double), &buffer));
  CHECK(napi_get_boolean(env, more, &morev));
  CHECK(napi_create_object(env, &result));
  CHECK(napi_set_named_property(env, result, "files", files));
  CHECK(napi_set_named_property(env, result, "sizes", buffer));
  CHECK(napi_set_named_property(env, result, "dirs", dirs));
  CHECK(napi_set_named_property(env, result, "errors", errors));
  CHECK(napi_set_named_property(env, result, "more", morev));
  goto done;

napi_failed:
  throw_unless_pending(env);
  result = NULL;
done:
  if (d) closedir(d);
  if (skip) {
    for (uint32_t i = 0; i < nskip; i++) free(skip[i]);
    free(skip);
  }
  free(sizes);
  free(dir);
  return result;
}

/** One name of readFiles() that failed: meta kind 2 and an [index, code, message] entry. */
static napi_status read_error(napi_env env, napi_value errors, uint32_t *n, double *meta, uint32_t i, const char *code, const char *message) {
  meta[5 * i] = 2;
  napi_value triple, v;
  napi_status st = napi_create_array_with_length(env, 3, &triple);
  if (st != napi_ok) return st;
  if ((st = napi_create_uint32(env, i, &v)) != napi_ok) return st;
  if ((st = napi_set_element(env, triple, 0, v)) != napi_ok) return st;
  if ((st = napi_create_string_utf8(env, code, NAPI_AUTO_LENGTH, &v)) != napi_ok) return st;
  if ((st = napi_set_element(env, triple, 1, v)) != napi_ok) return st;
  if ((st = napi_create_string_utf8(env, message, NAPI_AUTO_LENGTH, &v)) != napi_ok) return st;
  if ((st = napi_set_element(env, triple, 2, v)) != napi_ok) return st;
  return napi_set_element(env, errors, (*n)++, triple);
}

static napi_status read_errno(napi_env env, napi_value errors, uint32_t *n, double *meta, uint32_t i, const char *dir, const char *name, const char *syscall, int err) {
  char message[512];
  snprintf(message, sizeof message, "%s: %s, %s '%s/%s'", errno_name(err), strerror(err), syscall, dir, name);
  return read_error(env, errors, n, meta, i, errno_name(err), message);
}

static napi_value read_files(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  char *dir = NULL;
  char *name = NULL;
  double *meta = NULL;
  uint8_t *data = NULL;
  size_t total = 0, cap = 0;
  int dfd = -1;
  napi_value result = NULL;

  dir = dir_call_args(env, info, &argc, argv, "readFiles(dir, names, max, flags)");
  if (!dir) return NULL;
  uint32_t count;
  double maxd;
  int32_t flags;
  CHECK(napi_get_array_length(env, argv[1], &count));
  CHECK(napi_get_value_double(env, argv[2], &maxd));
  CHECK(napi_get_value_int32(env, argv[3], &flags));
  meta = calloc(count ? 5 * (size_t)count : 1, sizeof(double));
  if (!meta) goto napi_failed;

  dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) {
    throw_errno(env, errno, "opendir", dir);
    goto done;
  }
  napi_value errors;
  uint32_t nerrors = 0;
  CHECK(napi_create_array(env, &errors));
  for (uint32_t i = 0; i < count; i++) {
    napi_value v;
    CHECK(napi_get_element(env, argv[1], i, &v));
    free(name);
    name = string_arg(env, v);
    if (!name) goto napi_failed;
    if (strchr(name, '/') || name[0] == 0) {
      CHECK(read_error(env, errors, &nerrors, meta, i, "EINVAL", "EINVAL: not one entry of the directory"));
      continue;
    }
    int fd = openat(dfd, name, flags | O_CLOEXEC);
    if (fd < 0) {
      CHECK(read_errno(env, errors, &nerrors, meta, i, dir, name, "open", errno));
      continue;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
      int err = errno;
      close(fd);
      CHECK(read_errno(env, errors, &nerrors, meta, i, dir, name, "fstat", err));
      continue;
    }
    if (!S_ISREG(st.st_mode)) {
      close(fd);
      if (S_ISDIR(st.st_mode)) CHECK(read_error(env, errors, &nerrors, meta, i, "EISDIR", "is a directory"));
      else CHECK(read_error(env, errors, &nerrors, meta, i, "NOTREG", "not a regular file"));
      continue;
    }
    if ((double)st.st_size > maxd) {
      close(fd);
      meta[5 * i] = 1;
      continue;
    }
    // one byte more than the size: a file that grew since is seen as such
    size_t want = (size_t)st.st_size + 1;
    if (total + want > cap) {
      size_t grown = cap ? cap : 64 * 1024;
      while (grown < total + want) grown *= 2;
      uint8_t *bigger = realloc(data, grown);
      if (!bigger) {
        close(fd);
        goto napi_failed;
      }
      data = bigger;
      cap = grown;
    }
    size_t got = 0;
    int err = 0;
    while (got < want) {
      ssize_t r = pread(fd, data + total + got, want - got, (off_t)got);
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
      CHECK(read_errno(env, errors, &nerrors, meta, i, dir, name, "read", err));
      continue;
    }
    if ((double)got > maxd || got == want) {
      meta[5 * i] = 1;
      continue;
    }
    meta[5 * i] = 0;
    meta[5 * i + 1] = (double)total;
    meta[5 * i + 2] = (double)got;
    meta[5 * i + 3] = (double)st.st_mtim.tv_sec * 1e3 + (double)st.st_mtim.tv_nsec / 1e6;
    meta[5 * i + 4] = (double)st.st_mode;
    total += got;
  }

  napi_value metaBuf, dataBuf;
  CHECK(array_buffer_copy(env, meta, 5 * (size_t)count * sizeof(double), &metaBuf));
  CHECK(array_buffer_copy(env, data, total, &dataBuf));
  CHECK(napi_create_object(env, &result));
  CHECK(napi_set_named_property(env, result, "meta", metaBuf));
  CHECK(napi_set_named_property(env, result, "data", dataBuf));
  CHECK(napi_set_named_property(env, result, "errors", errors));
  goto done;

napi_failed:
  throw_unless_pending(env);
  result = NULL;
done:
  if (dfd >= 0) close(dfd);
  free(name);
  free(meta);
  free(data);
  free(dir);
  return result;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  if (napi_create_function(env, "sweep", NAPI_AUTO_LENGTH, sweep, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "sweep", fn) != napi_ok) return NULL;
  if (napi_create_function(env, "readFiles", NAPI_AUTO_LENGTH, read_files, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "readFiles", fn) != napi_ok) return NULL;
  return exports;
}
