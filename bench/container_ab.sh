#!/bin/bash
# A/B of two builds, whole process: compress on one thread and decompress on two, dt4096
# (bench/evaluate/dt_synth 4096 4096 7 DIR/dt4096), alternated, five rounds; prints
# "REL MODE old|new compress_s decompress_s bytes" lines (the CLI's reports go to stderr).
#   bench/container_ab.sh OLD_FACTZ NEW_FACTZ DIR > ab.out 2>/dev/null
OLD=$1; NEW=$2
U=$3/dt4096_u_4096x4096.f32; V=$3/dt4096_v_4096x4096.f32
export OMP_WAIT_POLICY=passive
for r in 1e-2 1e-3; do
 for m in speculative block; do
  for i in 1 2 3 4 5; do
   for b in old new; do
    B=$NEW; [ $b = old ] && B=$OLD
    t0=$(date +%s.%N); $B compress -2 4096 4096 -i $U -i $V -z /tmp/ab_$b.fz --mode $m -M REL $r -x omp=1 >/dev/null; t1=$(date +%s.%N)
    $B decompress -z /tmp/ab_$b.fz -o /tmp/ab_u.f32 -o /tmp/ab_v.f32 -x omp=2 >/dev/null; t2=$(date +%s.%N)
    echo "$r $m $b $(echo "$t1-$t0" | bc) $(echo "$t2-$t1" | bc) $(stat -c %s /tmp/ab_$b.fz)"
   done
  done
 done
done
