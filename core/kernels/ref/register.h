// The reference kernels' registration: every file of core/kernels/ref/ that holds an operator
// defines its register_<file>() (adding its ops to a registry), and register_reference_kernels()
// (register.cpp) calls them all; KernelRegistry::global() calls that. Explicit calls rather than
// static initialisers, which a static library would silently drop.
#pragma once

namespace weave {

class KernelRegistry;

// Every reference kernel, in a fixed order: entries of one op and priority keep the order they
// were added in (KernelRegistry::add).
void register_reference_kernels(KernelRegistry& r);

void register_conv(KernelRegistry& r);                         // Conv
void register_conv_transpose(KernelRegistry& r);               // ConvTranspose
void register_matmul(KernelRegistry& r);                       // MatMul
void register_gemm(KernelRegistry& r);                         // Gemm
void register_pool(KernelRegistry& r);                         // MaxPool, AveragePool
void register_global_pool(KernelRegistry& r);                  // GlobalMaxPool, GlobalAveragePool
void register_max_unpool(KernelRegistry& r);                   // MaxUnpool
void register_lrn(KernelRegistry& r);                          // LRN
void register_mean_variance_normalization(KernelRegistry& r);  // MeanVarianceNormalization
void register_batch_normalization(KernelRegistry& r);          // BatchNormalization
void register_layer_normalization(KernelRegistry& r);          // LayerNormalization
void register_instance_normalization(KernelRegistry& r);       // InstanceNormalization
void register_softmax(KernelRegistry& r);                      // Softmax, LogSoftmax, Hardmax
void register_rnn(KernelRegistry& r);                          // LSTM, GRU, RNN
void register_resize(KernelRegistry& r);                       // Resize (two kernels), Upsample
void register_binary(KernelRegistry& r);      // Add, Sub, Mul, Div, Pow, Max, Min, Sum, Mean, Mod
void register_comparison(KernelRegistry& r);  // Equal, Less, Greater, LessOrEqual, GreaterOrEqual
void register_logical(KernelRegistry& r);     // And, Or, Xor, Not
void register_where(KernelRegistry& r);       // Where
void register_prelu(KernelRegistry& r);       // PRelu
void register_unary(
    KernelRegistry& r);  // Relu, Sigmoid, Tanh, Exp, Log, Sqrt, Mish, Sin, ... (the unary math ops)
void register_activation(
    KernelRegistry& r);  // LeakyRelu, HardSigmoid, Elu, Selu, Gelu, Swish, ThresholdedRelu, Shrink, Celu
void register_is_nan(KernelRegistry& r);             // IsNaN, IsInf
void register_bit_shift(KernelRegistry& r);          // BitShift
void register_clip(KernelRegistry& r);               // Clip
void register_identity(KernelRegistry& r);           // Identity
void register_dropout(KernelRegistry& r);            // Dropout
void register_cast(KernelRegistry& r);               // Cast, CastLike
void register_shape(KernelRegistry& r);              // Shape
void register_size(KernelRegistry& r);               // Size
void register_reshape(KernelRegistry& r);            // Reshape
void register_flatten(KernelRegistry& r);            // Flatten
void register_squeeze(KernelRegistry& r);            // Squeeze, Unsqueeze
void register_transpose(KernelRegistry& r);          // Transpose
void register_concat(KernelRegistry& r);             // Concat
void register_split(KernelRegistry& r);              // Split
void register_slice(KernelRegistry& r);              // Slice
void register_gather(KernelRegistry& r);             // Gather, GatherElements, GatherND
void register_expand(KernelRegistry& r);             // Expand
void register_tile(KernelRegistry& r);               // Tile
void register_constant_of_shape(KernelRegistry& r);  // ConstantOfShape
void register_range(KernelRegistry& r);              // Range
void register_pad(KernelRegistry& r);                // Pad
void register_depth_to_space(KernelRegistry& r);     // DepthToSpace, SpaceToDepth
void register_reduce(
    KernelRegistry& r);  // ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ...
void register_arg_max(KernelRegistry& r);           // ArgMax, ArgMin
void register_top_k(KernelRegistry& r);             // TopK
void register_loss(KernelRegistry& r);              // NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss
void register_trilu(KernelRegistry& r);             // Trilu
void register_eye_like(KernelRegistry& r);          // EyeLike
void register_cum_sum(KernelRegistry& r);           // CumSum
void register_scatter(KernelRegistry& r);           // ScatterElements, Scatter, ScatterND
void register_one_hot(KernelRegistry& r);           // OneHot
void register_compress(KernelRegistry& r);          // Compress
void register_non_zero(KernelRegistry& r);          // NonZero
void register_unique(KernelRegistry& r);            // Unique
void register_reverse_sequence(KernelRegistry& r);  // ReverseSequence
void register_quantize_linear(KernelRegistry& r);   // QuantizeLinear, DequantizeLinear
void register_dynamic_quantize_linear(KernelRegistry& r);  // DynamicQuantizeLinear
void register_matmul_integer(KernelRegistry& r);           // MatMulInteger, QLinearMatMul
void register_conv_integer(KernelRegistry& r);             // ConvInteger, QLinearConv
void register_einsum(KernelRegistry& r);                   // Einsum
void register_det(KernelRegistry& r);                      // Det
void register_window(KernelRegistry& r);                   // HannWindow, HammingWindow, BlackmanWindow
void register_mel_weight_matrix(KernelRegistry& r);        // MelWeightMatrix
void register_dft(KernelRegistry& r);                      // DFT, STFT
void register_non_max_suppression(KernelRegistry& r);      // NonMaxSuppression
void register_roi_align(KernelRegistry& r);                // RoiAlign
void register_grid_sample(KernelRegistry& r);              // GridSample
void register_tf_idf_vectorizer(KernelRegistry& r);        // TfIdfVectorizer
void register_optimizer(KernelRegistry& r);                // Adagrad, Momentum, Adam (training domain)

}  // namespace weave
