cd .devcheck/jobs
for j in oom assert nan hf lit; do echo "== $j"; timeout 120 python3 $j.py > $OUT/g_$j.log 2>&1; echo "rc=$?"; done
echo "== nccl_dup"; timeout 90 torchrun --nproc_per_node=2 nccl_dup.py > $OUT/g_nccl.log 2>&1; echo "rc=$?"
ls -la $OUT; tail -5 $OUT/g_nccl.log
