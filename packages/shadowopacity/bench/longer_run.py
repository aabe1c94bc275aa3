"""The full model against its best ablation (no SOA) with more training steps, in the full
reproduction's setting otherwise (32x32, 1,500 / 300 scenes, seed 0, base 8, batch 16).

    OMP_NUM_THREADS=1 uv run python packages/shadowopacity/bench/longer_run.py [steps]
"""

import sys
import time

from paperkit import print_table
from shadowopacity import evaluate, make_shadow_scenes, train_method

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 1600
train = make_shadow_scenes(1500, size=32, seed=0)
test = make_shadow_scenes(300, size=32, seed=1)
rows = []
for method in ("ours w/o SOA", "ours"):
    t0 = time.process_time()
    r = evaluate(train_method(method, train, steps=steps, show_progress=False), test)
    cols = ("MAE", "BER", "MAE soft", "MAE mid", "MAE hard", "Kendall", "removal PSNR")
    rows.append(
        {
            "method": method,
            **{k: round(r[k], 4) for k in cols},
            "cpu s": round(time.process_time() - t0, 1),
        }
    )
print_table(rows, title=f"{steps} steps")
