/*
 * glibc's malloc_trim(0) for node: gives the free pages of the allocator's
 * heaps back to the system (madvise MADV_DONTNEED on every free page, not
 * only at the top of the heap), so that what a burst of allocations left
 * free stops counting in the process's resident memory. On a C library
 * without it (musl) the addon still loads and answers false.
 */
#include <node_api.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

static napi_value Trim(napi_env env, napi_callback_info info) {
  int released = 0;
  (void)info;
#if defined(__GLIBC__)
  released = malloc_trim(0);
#endif
  napi_value out;
  if (napi_get_boolean(env, released != 0, &out) != napi_ok) return NULL;
  return out;
}

static napi_value Supported(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value out;
#if defined(__GLIBC__)
  if (napi_get_boolean(env, 1, &out) != napi_ok) return NULL;
#else
  if (napi_get_boolean(env, 0, &out) != napi_ok) return NULL;
#endif
  return out;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  if (napi_create_function(env, "trim", NAPI_AUTO_LENGTH, Trim, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "trim", fn) != napi_ok) return NULL;
  if (napi_create_function(env, "supported", NAPI_AUTO_LENGTH, Supported, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "supported", fn) != napi_ok) return NULL;
  return exports;
}
