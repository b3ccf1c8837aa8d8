{
  "targets": [
    {
      "target_name": "heap_trim",
      "sources": ["native/heap-trim.c"],
      "cflags": ["-O2", "-Wall", "-fvisibility=hidden"],
      "defines": ["NDEBUG"]
    }
  ]
}
