export FP8=True
export FP8_PARAM_GATHER=True
export REUSE_GRAD_BUF_FOR_MXFP8_PARAM_AG=True
export FP8_DPA=True
