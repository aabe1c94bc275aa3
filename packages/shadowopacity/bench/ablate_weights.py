"""Loss-weight ablation of the full model: the quick reproduction's setting (32x32, 1,500 / 300
scenes, seed 0, base 8, batch 16) with one weight of eq. "Total" set to 0 at a time.

    OMP_NUM_THREADS=1 uv run python packages/shadowopacity/bench/ablate_weights.py [steps]
"""

import sys
import time

from paperkit import print_table
from shadowopacity import evaluate, make_shadow_scenes, train_method

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 150
train = make_shadow_scenes(1500, size=32, seed=0)
test = make_shadow_scenes(300, size=32, seed=1)
rows = []
for name, weights in [
    ("all terms", {}),
    ("w_pos = 0", {"w_pos": 0.0}),
    ("w_inv = 0", {"w_inv": 0.0}),
    ("w_rank = 0", {"w_rank": 0.0}),
    ("w_dec = 0", {"w_dec": 0.0}),
]:
    t0 = time.process_time()
    model = train_method("ours", train, steps=steps, weights=weights, show_progress=False)
    r = evaluate(model, test)
    cols = ("MAE", "BER", "MAE soft", "MAE mid", "MAE hard", "Kendall", "removal PSNR")
    rows.append(
        {
            "variant": name,
            **{k: round(r[k], 4) for k in cols},
            "cpu s": round(time.process_time() - t0, 1),
        }
    )
print_table(rows, title=f"ours, {steps} steps, one loss weight off at a time")
