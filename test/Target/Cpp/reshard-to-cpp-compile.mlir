// The C++ that reshard-translate --reshard-to-cpp --backend=mpi emits for a
// hand-written plan compiles with -Wall -Werror (with and without the
// RESHARD_MPI_DRIVER main), its header is valid C99 and C++ and agrees
// with the definitions, and the program moves the right bytes when run
// under mpirun: the plan of reshard-to-cpp.mlir, whose second tensor's
// name (a"b\c) must survive the C string into the shard file names.
// names.mlir does the same for names with control, non-ASCII and '?'
// bytes and a trailing backslash, which appear (escaped) in the comment
// lines at the top of the header and in the source's name table: compiled
// as C++11 with trigraphs and the header as C99 (where trigraphs are on), a
// raw name would end or splice a comment (-Wcomment, -Wtrigraphs) or change
// a string.
// REQUIRES: mpi

// RUN: rm -rf %t && split-file %s %t && mkdir -p %t/src %t/dst
// RUN: reshard-translate --reshard-to-cpp %t/tiny.mlir -o %t/tiny.cpp
// RUN: reshard-translate --reshard-to-cpp --reshard-cpp-emit=header %t/tiny.mlir -o %t/tiny.h
// RUN: mpicxx -std=c++17 -Wall -Werror -I%reshard_include -fsyntax-only %t/tiny.cpp
// RUN: mpicc -x c -std=c99 -Wall -Werror -I%reshard_include -fsyntax-only %t/tiny.h
// RUN: mpicxx -std=c++17 -Wall -Werror -I%reshard_include -I%t -include tiny.h -fsyntax-only %t/tiny.cpp
// RUN: mpicxx -std=c++17 -O1 -Wall -Werror -DRESHARD_MPI_DRIVER -I%reshard_include %t/tiny.cpp -o %t/tiny
// RUN: %python %t/shards.py make %t/src
// RUN: env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_oob_tcp_if_include=lo HWLOC_COMPONENTS=-gl mpirun --oversubscribe -n 3 %t/tiny --src %t/src --dst %t/dst
// RUN: %python %t/shards.py show %t/dst | FileCheck %s

// RUN: mkdir -p %t/names-src %t/names-dst
// RUN: reshard-translate --reshard-to-cpp %t/names.mlir -o %t/names.cpp
// RUN: reshard-translate --reshard-to-cpp --reshard-cpp-emit=header %t/names.mlir -o %t/names.h
// RUN: mpicxx -std=c++11 -trigraphs -Wall -Werror -I%reshard_include -fsyntax-only %t/names.cpp
// RUN: mpicc -x c -std=c99 -Wall -Werror -I%reshard_include -fsyntax-only %t/names.h
// RUN: mpicxx -std=c++11 -trigraphs -Wall -Werror -I%reshard_include -I%t -include names.h -fsyntax-only %t/names.cpp
// RUN: mpicxx -std=c++17 -O1 -Wall -Werror -DRESHARD_MPI_DRIVER -I%reshard_include %t/names.cpp -o %t/names
// RUN: %python %t/shards.py make-names %t/names-src
// RUN: env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_oob_tcp_if_include=lo HWLOC_COMPONENTS=-gl mpirun --oversubscribe -n 1 %t/names --src %t/names-src --dst %t/names-dst
// RUN: %python %t/shards.py show-names %t/names-dst | FileCheck %s --check-prefix=NAMES

// Each tensor's 2 bytes (i, 100 + i) come back under its own name, shown
// as Python's ascii() of the file name.
// NAMES:      'rank0.back\\.bin': 6 106{{$}}
// NAMES-NEXT: 'rank0.caf\xe9.bin': 3 103{{$}}
// NAMES-NEXT: 'rank0.del\x7f.bin': 5 105{{$}}
// NAMES-NEXT: 'rank0.n7\n7.bin': 4 104{{$}}
// NAMES-NEXT: 'rank0.new\nline.bin': 0 100{{$}}
// NAMES-NEXT: 'rank0.tab\there.bin': 1 101{{$}}
// NAMES-NEXT: 'rank0.tri??=graph.bin': 2 102{{$}}
// NAMES-NOT:  rank

// Rank 0 keeps tensor 1 (local copy) and sends both tensors to rank 2;
// rank 1 has no program and writes nothing.
// CHECK:      rank0.a"b\c.bin: 100 101 102 103 104 105 106 107{{$}}
// CHECK-NEXT: rank2.a"b\c.bin: 100 101 102 103 104 105 106 107{{$}}
// CHECK-NEXT: rank2.w.bin: 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15{{$}}
// CHECK-NOT:  rank

//--- tiny.mlir
reshard_rt.plan @tiny num_ranks = 3 tensors = ["w", "a\"b\\c"] fingerprint = -2 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [2]
  reshard_rt.mesh 2 ranks [0, 2]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.class 1 element_bytes 4 rank 1 src combos [0] shapes [[2]] dst combos [0, 0] shapes [[2]] {
    reshard_rt.piece dst 0 src 0 size [2] at [0] from [0] pack <+0 run 8> unpack <+0 run 8> copy <+0 -> +0 run 8>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
  reshard_rt.group 1 class 1 from 0 to 2 tensors [1]
  reshard_rt.items 0 [g0.p0[0], g1.p0[0]]
  reshard_rt.items 1 [g1.p0[0]]
  reshard_rt.rank 0 workspace = 16 {
    reshard_rt.copy items 1
    reshard_rt.send to 2 phase 0 start 0 quota 16 bytes 24 items 0
  }
  reshard_rt.rank 2 workspace = 16 {
    reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 24 items 0
  }
}

//--- names.mlir
// One rank copies each tensor's 2 bytes to its destination shard.
reshard_rt.plan @names num_ranks = 1 tensors = ["new\nline", "tab\there", "tri??=graph", "caf\C3\A9", "n7\0A7", "del\7F", "back\\"] fingerprint = 1 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.class 0 element_bytes 1 rank 1 src combos [0] shapes [[2]] dst combos [0] shapes [[2]] {
    reshard_rt.piece dst 0 src 0 size [2] at [0] from [0] pack <+0 run 2> unpack <+0 run 2> copy <+0 -> +0 run 2>
  }
  reshard_rt.group 0 class 0 from 0 to 0 tensors [0, 1, 2, 3, 4, 5, 6]
  reshard_rt.items 0 [g0.p0[0 x 7]]
  reshard_rt.rank 0 workspace = 0 {
    reshard_rt.copy items 0
  }
}

//--- shards.py
# make DIR: rank 0's source shards (w = bytes 0..15, a"b\c = 100..107).
# show DIR: every file in DIR, sorted, with its bytes.
# make-names DIR: rank 0's shards of names.mlir (tensor i = bytes i, 100+i).
# show-names DIR: like show, file names as ascii() (they hold newlines).
import os, sys
mode, d = sys.argv[1], sys.argv[2]
NAMES = ["new\nline", "tab\there", "tri??=graph", "caf\u00e9", "n7\n7",
         "del\x7f", "back\\"]
if mode == "make-names":
    for i, n in enumerate(NAMES):
        with open(os.path.join(d, "rank0." + n + ".bin"), "wb") as f:
            f.write(bytes([i, 100 + i]))
elif mode == "show-names":
    for name in sorted(os.listdir(d)):
        with open(os.path.join(d, name), "rb") as f:
            print(ascii(name) + ": " + " ".join(str(b) for b in f.read()))
elif mode == "make":
    with open(os.path.join(d, "rank0.w.bin"), "wb") as f:
        f.write(bytes(range(16)))
    with open(os.path.join(d, 'rank0.a"b\\c.bin'), "wb") as f:
        f.write(bytes(range(100, 108)))
else:
    for name in sorted(os.listdir(d)):
        with open(os.path.join(d, name), "rb") as f:
            print(name + ": " + " ".join(str(b) for b in f.read()))
