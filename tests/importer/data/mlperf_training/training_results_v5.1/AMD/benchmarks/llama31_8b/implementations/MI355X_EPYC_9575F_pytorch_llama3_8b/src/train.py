# Excerpt (test data, not code of ours): lines 154-166 of AMD's src/train.py at training_results_v5.1 441d65f
# (blob e50a7f81), the MegatronMixedPrecision call the importer reads; every other line blanked so that the
# call keeps its line numbers (fp8="hybrid" at line 160).






















































































































































    precision = nl.MegatronMixedPrecision(
        precision="bf16-mixed",
        params_dtype=torch.bfloat16,
        pipeline_dtype=torch.bfloat16,
        autocast_enabled=True,
        grad_reduce_in_fp32=False,
        fp8="hybrid",
        fp8_margin=0,
        fp8_amax_history_len=4,
        fp8_amax_compute_algo='most_recent',
        fp8_params=fp8_params,
        fp8_dot_product_attention=False,
    )
