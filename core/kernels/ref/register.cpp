// register_reference_kernels: every file's register_<file>() (register.h).
#include "core/kernels/ref/register.h"

#include "core/kernels/registry.h"

namespace weave {

void register_reference_kernels(KernelRegistry& r) {
  register_conv(r);
  register_conv_transpose(r);
  register_matmul(r);
  register_gemm(r);
  register_pool(r);
  register_global_pool(r);
  register_max_unpool(r);
  register_lrn(r);
  register_mean_variance_normalization(r);
  register_batch_normalization(r);
  register_layer_normalization(r);
  register_instance_normalization(r);
  register_softmax(r);
  register_rnn(r);
  register_resize(r);
  register_binary(r);
  register_comparison(r);
  register_logical(r);
  register_where(r);
  register_prelu(r);
  register_unary(r);
  register_activation(r);
  register_is_nan(r);
  register_bit_shift(r);
  register_clip(r);
  register_identity(r);
  register_dropout(r);
  register_cast(r);
  register_shape(r);
  register_size(r);
  register_reshape(r);
  register_flatten(r);
  register_squeeze(r);
  register_transpose(r);
  register_concat(r);
  register_split(r);
  register_slice(r);
  register_gather(r);
  register_expand(r);
  register_tile(r);
  register_constant_of_shape(r);
  register_range(r);
  register_pad(r);
  register_depth_to_space(r);
  register_reduce(r);
  register_arg_max(r);
  register_top_k(r);
  register_loss(r);
  register_trilu(r);
  register_eye_like(r);
  register_cum_sum(r);
  register_scatter(r);
  register_one_hot(r);
  register_compress(r);
  register_non_zero(r);
  register_unique(r);
  register_reverse_sequence(r);
  register_quantize_linear(r);
  register_dynamic_quantize_linear(r);
  register_matmul_integer(r);
  register_conv_integer(r);
  register_einsum(r);
  register_det(r);
  register_window(r);
  register_mel_weight_matrix(r);
  register_dft(r);
  register_non_max_suppression(r);
  register_roi_align(r);
  register_grid_sample(r);
  register_tf_idf_vectorizer(r);
  register_optimizer(r);
}

}  // namespace weave
