{
  "targets": [
    {
      "target_name": "dir_sweep",
      "sources": ["native/sweep.c"],
      "cflags": ["-O2", "-Wall", "-fvisibility=hidden"],
      "defines": ["NDEBUG"]
    }
  ]
}
