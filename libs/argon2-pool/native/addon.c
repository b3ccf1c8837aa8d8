/*
 * argon2 hashing whose working memory (m KiB, 19 MiB at Ferry's settings) is
 * kept between hashes in a small pool instead of being given back to the C
 * library at the end of each one. A process that gives large blocks back at
 * once (glibc with a fixed mmap threshold, as core/bin/ferry sets it) would
 * otherwise map, fault in 4 KiB at a time and unmap the whole block on every
 * password check. The pool holds at most `limit` blocks; trim() frees them
 * (the JavaScript side does so once no hash has run for a while).
 *
 * The hashing itself is the argon2 reference implementation, compiled from the
 * sources the `argon2` package ships (binding.gyp). argon2 wipes the block
 * before giving it back (FLAG_clear_internal_memory), so a pooled block holds
 * zeros, never state derived from a password.
 */
#define NAPI_VERSION 8
#include <node_api.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "argon2.h"

#define POOL_MAX 64

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *pool_mem[POOL_MAX];
static size_t pool_size[POOL_MAX];
static size_t pool_count = 0;
static size_t pool_limit = 0;
static uint64_t reused = 0;
static uint64_t allocated = 0;

static int pool_alloc(uint8_t **memory, size_t bytes) {
  pthread_mutex_lock(&pool_lock);
  for (size_t i = 0; i < pool_count; i++) {
    if (pool_size[i] == bytes) {
      *memory = pool_mem[i];
      pool_count--;
      pool_mem[i] = pool_mem[pool_count];
      pool_size[i] = pool_size[pool_count];
      reused++;
      pthread_mutex_unlock(&pool_lock);
      return ARGON2_OK;
    }
  }
  allocated++;
  pthread_mutex_unlock(&pool_lock);
  *memory = malloc(bytes);
  return *memory ? ARGON2_OK : ARGON2_MEMORY_ALLOCATION_ERROR;
}

static void pool_free(uint8_t *memory, size_t bytes) {
  if (!memory) return;
  pthread_mutex_lock(&pool_lock);
  if (pool_count < pool_limit) {
    pool_mem[pool_count] = memory;
    pool_size[pool_count] = bytes;
    pool_count++;
    memory = NULL;
  }
  pthread_mutex_unlock(&pool_lock);
  free(memory);
}

typedef struct {
  napi_async_work work;
  napi_deferred deferred;
  uint8_t *pwd;
  size_t pwdlen;
  uint8_t *salt;
  size_t saltlen;
  uint8_t *out;
  uint32_t outlen;
  uint32_t t, m, p, version;
  argon2_type type;
  int result;
} job_t;

static void wipe_free(uint8_t *p, size_t n) {
  if (!p) return;
  volatile uint8_t *v = p;
  while (n--) *v++ = 0;
  free(p);
}

static void job_free(job_t *job) {
  wipe_free(job->pwd, job->pwdlen);
  wipe_free(job->salt, job->saltlen);
  wipe_free(job->out, job->outlen);
  free(job);
}

static void execute(napi_env env, void *data) {
  (void)env;
  job_t *job = data;
  argon2_context ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.out = job->out;
  ctx.outlen = job->outlen;
  ctx.pwd = job->pwd;
  ctx.pwdlen = (uint32_t)job->pwdlen;
  ctx.salt = job->salt;
  ctx.saltlen = (uint32_t)job->saltlen;
  ctx.t_cost = job->t;
  ctx.m_cost = job->m;
  ctx.lanes = job->p;
  ctx.threads = job->p;
  ctx.version = job->version;
  ctx.allocate_cbk = pool_alloc;
  ctx.free_cbk = pool_free;
  ctx.flags = ARGON2_FLAG_CLEAR_PASSWORD;
  job->result = argon2_ctx(&ctx, job->type);
  /* the password copy was wiped by argon2 (ARGON2_FLAG_CLEAR_PASSWORD) */
}

static void complete(napi_env env, napi_status status, void *data) {
  job_t *job = data;
  napi_value value;
  if (status != napi_ok) {
    napi_value msg;
    napi_create_string_utf8(env, "argon2 hashing was cancelled", NAPI_AUTO_LENGTH, &msg);
    napi_create_error(env, NULL, msg, &value);
    napi_reject_deferred(env, job->deferred, value);
  } else if (job->result != ARGON2_OK) {
    napi_value msg;
    napi_create_string_utf8(env, argon2_error_message(job->result), NAPI_AUTO_LENGTH, &msg);
    napi_create_error(env, NULL, msg, &value);
    napi_reject_deferred(env, job->deferred, value);
  } else {
    void *copy;
    napi_create_buffer_copy(env, job->outlen, job->out, &copy, &value);
    napi_resolve_deferred(env, job->deferred, value);
  }
  napi_delete_async_work(env, job->work);
  job_free(job);
}

static napi_value throw_type(napi_env env, const char *message) {
  napi_throw_type_error(env, NULL, message);
  return NULL;
}

static int get_u32(napi_env env, napi_value v, uint32_t *out) {
  return napi_get_value_uint32(env, v, out) == napi_ok;
}

static int copy_buffer(napi_env env, napi_value v, uint8_t **out, size_t *len) {
  bool is;
  void *data;
  if (napi_is_buffer(env, v, &is) != napi_ok || !is) return 0;
  if (napi_get_buffer_info(env, v, &data, len) != napi_ok) return 0;
  *out = malloc(*len ? *len : 1);
  if (!*out) return 0;
  if (*len) memcpy(*out, data, *len);
  return 1;
}

/* hashRaw(password: Buffer, salt: Buffer, hashLength, t, m, p, type, version): Promise<Buffer> */
static napi_value hash_raw(napi_env env, napi_callback_info info) {
  size_t argc = 8;
  napi_value argv[8];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc != 8) return throw_type(env, "hashRaw takes 8 arguments");
  job_t *job = calloc(1, sizeof *job);
  if (!job) return throw_type(env, "out of memory");
  uint32_t type;
  if (!copy_buffer(env, argv[0], &job->pwd, &job->pwdlen) || !copy_buffer(env, argv[1], &job->salt, &job->saltlen) ||
      !get_u32(env, argv[2], &job->outlen) || !get_u32(env, argv[3], &job->t) || !get_u32(env, argv[4], &job->m) ||
      !get_u32(env, argv[5], &job->p) || !get_u32(env, argv[6], &type) || !get_u32(env, argv[7], &job->version) || type > 2 ||
      job->outlen < ARGON2_MIN_OUTLEN || job->outlen > 1024) {
    job_free(job);
    return throw_type(env, "hashRaw: password and salt must be Buffers, the others unsigned integers (type 0-2, hash length 4-1024)");
  }
  job->type = (argon2_type)type;
  job->out = malloc(job->outlen);
  if (!job->out) {
    job_free(job);
    return throw_type(env, "out of memory");
  }
  napi_value promise, name;
  napi_create_promise(env, &job->deferred, &promise);
  napi_create_string_utf8(env, "argon2-pool:hash", NAPI_AUTO_LENGTH, &name);
  napi_create_async_work(env, NULL, name, execute, complete, job, &job->work);
  napi_queue_async_work(env, job->work);
  return promise;
}

/* setLimit(n): how many blocks the pool keeps (0-64); blocks above it are freed. */
static napi_value set_limit(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  uint32_t n;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc != 1 || !get_u32(env, argv[0], &n) || n > POOL_MAX) return throw_type(env, "setLimit takes a count of 0-64");
  uint8_t *drop[POOL_MAX];
  size_t dropped = 0;
  pthread_mutex_lock(&pool_lock);
  pool_limit = n;
  while (pool_count > pool_limit) drop[dropped++] = pool_mem[--pool_count];
  pthread_mutex_unlock(&pool_lock);
  for (size_t i = 0; i < dropped; i++) free(drop[i]);
  return NULL;
}

/* trim(): frees every pooled block; answers how many bytes were freed. */
static napi_value trim(napi_env env, napi_callback_info info) {
  (void)info;
  uint8_t *drop[POOL_MAX];
  size_t dropped = 0;
  double bytes = 0;
  pthread_mutex_lock(&pool_lock);
  while (pool_count > 0) {
    pool_count--;
    drop[dropped++] = pool_mem[pool_count];
    bytes += (double)pool_size[pool_count];
  }
  pthread_mutex_unlock(&pool_lock);
  for (size_t i = 0; i < dropped; i++) free(drop[i]);
  napi_value v;
  napi_create_double(env, bytes, &v);
  return v;
}

/* stats(): { pooled, pooledBytes, limit, reused, allocated } */
static napi_value stats(napi_env env, napi_callback_info info) {
  (void)info;
  double bytes = 0;
  pthread_mutex_lock(&pool_lock);
  for (size_t i = 0; i < pool_count; i++) bytes += (double)pool_size[i];
  double values[5] = {(double)pool_count, bytes, (double)pool_limit, (double)reused, (double)allocated};
  pthread_mutex_unlock(&pool_lock);
  const char *names[5] = {"pooled", "pooledBytes", "limit", "reused", "allocated"};
  napi_value obj;
  napi_create_object(env, &obj);
  for (int i = 0; i < 5; i++) {
    napi_value v;
    napi_create_double(env, values[i], &v);
    napi_set_named_property(env, obj, names[i], v);
  }
  return obj;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
      {"hashRaw", NULL, hash_raw, NULL, NULL, NULL, napi_default, NULL},
      {"setLimit", NULL, set_limit, NULL, NULL, NULL, napi_default, NULL},
      {"trim", NULL, trim, NULL, NULL, NULL, napi_default, NULL},
      {"stats", NULL, stats, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
