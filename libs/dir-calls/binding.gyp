{
  "targets": [
    {
      "target_name": "dir_calls",
      "sources": ["native/dir-calls.c"],
      "cflags": ["-O2", "-Wall", "-fvisibility=hidden"],
      "defines": ["NDEBUG"]
    }
  ]
}
