// The C++ that reshard-translate --reshard-to-cpp --backend=mpi emits for a
// hand-written plan compiles with -Wall -Werror (with and without the
// RESHARD_MPI_DRIVER main), its header is valid C99 and C++ and agrees
// with the definitions, and the program moves the right bytes when run
// under mpirun: the plan of reshard-to-cpp.mlir, whose second tensor's
// name (a"b\c) must survive the C string into the shard file names.
// REQUIRES: mpi

// RUN: rm -rf %t && split-file %s %t && mkdir -p %t/src %t/dst
// RUN: reshard-translate --reshard-to-cpp %t/tiny.mlir -o %t/tiny.cpp
// RUN: reshard-translate --reshard-to-cpp --reshard-cpp-emit=header %t/tiny.mlir -o %t/tiny.h
// RUN: mpicxx -std=c++17 -Wall -Werror -I%reshard_include -fsyntax-only %t/tiny.cpp
// RUN: mpicc -x c -std=c99 -Wall -Werror -fsyntax-only %t/tiny.h
// RUN: mpicxx -std=c++17 -Wall -Werror -I%reshard_include -I%t -include tiny.h -fsyntax-only %t/tiny.cpp
// RUN: mpicxx -std=c++17 -O1 -Wall -Werror -DRESHARD_MPI_DRIVER -I%reshard_include %t/tiny.cpp -o %t/tiny
// RUN: %python %t/shards.py make %t/src
// RUN: env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_oob_tcp_if_include=lo HWLOC_COMPONENTS=-gl mpirun --oversubscribe -n 3 %t/tiny --src %t/src --dst %t/dst
// RUN: %python %t/shards.py show %t/dst | FileCheck %s

// Rank 0 keeps tensor 1 (local copy) and sends both tensors to rank 2;
// rank 1 has no program and writes nothing.
// CHECK:      rank0.a"b\c.bin: 100 101 102 103 104 105 106 107{{$}}
// CHECK-NEXT: rank2.a"b\c.bin: 100 101 102 103 104 105 106 107{{$}}
// CHECK-NEXT: rank2.w.bin: 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15{{$}}
// CHECK-NOT:  rank

//--- tiny.mlir
reshard_rt.plan @tiny num_ranks = 3 tensors = ["w", "a\"b\\c"] fingerprint = -2 {
  reshard_rt.rank 0 workspace = 16 src_bytes = [16, 8] dst_bytes = [-1, 8] {
    reshard_rt.copy [1, 0, 0, 8, 0]
    reshard_rt.step 0 {
      reshard_rt.send to 2 bytes 16 staging 0 pack = [0, 0, 0, 16, 0]
    }
    reshard_rt.step 1 {
      reshard_rt.send to 2 bytes 8 staging 0 pack = [1, 0, 0, 8, 0]
    }
  }
  reshard_rt.rank 2 workspace = 16 src_bytes = [-1, -1] dst_bytes = [16, 8] {
    reshard_rt.step 0 {
      reshard_rt.recv from 0 bytes 16 staging 0 unpack = [0, 1, 0, 8, 1, 2, 8]
    }
    reshard_rt.step 1 {
      reshard_rt.recv from 0 bytes 8 staging 0 unpack = [1, 1, 0, 8, 0]
    }
  }
}

//--- shards.py
# make DIR: rank 0's source shards (w = bytes 0..15, a"b\c = 100..107).
# show DIR: every file in DIR, sorted, with its bytes.
import os, sys
mode, d = sys.argv[1], sys.argv[2]
if mode == "make":
    with open(os.path.join(d, "rank0.w.bin"), "wb") as f:
        f.write(bytes(range(16)))
    with open(os.path.join(d, 'rank0.a"b\\c.bin'), "wb") as f:
        f.write(bytes(range(100, 108)))
else:
    for name in sorted(os.listdir(d)):
        with open(os.path.join(d, name), "rb") as f:
            print(name + ": " + " ".join(str(b) for b in f.read()))
