{
  "variables": {
    "argon2_dir": "<!(node -p \"require('path').dirname(require.resolve('argon2/package.json'))\")"
  },
  "targets": [
    {
      "target_name": "argon2_pool",
      "sources": [
        "native/addon.c",
        "native/argon2-argon2.c",
        "native/argon2-core.c",
        "native/argon2-encoding.c",
        "native/argon2-thread.c",
        "native/argon2-blake2b.c"
      ],
      "include_dirs": ["<(argon2_dir)/argon2/include", "<(argon2_dir)/argon2", "<(argon2_dir)/argon2/src"],
      "cflags": ["-O3", "-Wno-type-limits", "-fvisibility=hidden"],
      "defines": ["NDEBUG"],
      "conditions": [
        ["target_arch == 'x64' or target_arch == 'ia32'", {
          "cflags": ["-msse2"],
          "sources": ["native/argon2-opt.c"]
        }, {
          "sources": ["native/argon2-ref.c"]
        }]
      ]
    }
  ]
}
