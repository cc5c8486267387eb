module @jit_bf16_arith attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x8xbf16>, %arg1: tensor<4x8xbf16>, %arg2: tensor<8x3xbf16>) -> (tensor<4x8xbf16> {jax.result_info = "result[0]"}, tensor<4x8xbf16> {jax.result_info = "result[1]"}, tensor<4x8xbf16> {jax.result_info = "result[2]"}, tensor<4xbf16> {jax.result_info = "result[3]"}, tensor<4x3xf32> {jax.result_info = "result[4]"}, tensor<4x3xbf16> {jax.result_info = "result[5]"}, tensor<4x8xbf16> {jax.result_info = "result[6]"}, tensor<4x8xf32> {jax.result_info = "result[7]"}, tensor<4x8xbf16> {jax.result_info = "result[8]"}) {
    %0 = stablehlo.multiply %arg0, %arg1 : tensor<4x8xbf16>
    %1 = stablehlo.add %0, %arg0 : tensor<4x8xbf16>
    %2 = stablehlo.exponential %arg0 : tensor<4x8xbf16>
    %3 = stablehlo.tanh %arg1 : tensor<4x8xbf16>
    %4 = stablehlo.convert %arg0 : (tensor<4x8xbf16>) -> tensor<4x8xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %5 = stablehlo.reduce(%4 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
    %6 = stablehlo.convert %5 : (tensor<4xf32>) -> tensor<4xbf16>
    %7 = stablehlo.dot_general %arg0, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xbf16>, tensor<8x3xbf16>) -> tensor<4x3xf32>
    %8 = stablehlo.dot_general %arg0, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xbf16>, tensor<8x3xbf16>) -> tensor<4x3xbf16>
    %9 = stablehlo.maximum %arg0, %arg1 : tensor<4x8xbf16>
    %10 = stablehlo.divide %arg0, %arg1 : tensor<4x8xbf16>
    %11 = stablehlo.convert %10 : (tensor<4x8xbf16>) -> tensor<4x8xf32>
    %cst_0 = stablehlo.constant dense<0xFF80> : tensor<bf16>
    %12 = stablehlo.reduce(%arg0 init: %cst_0) applies stablehlo.maximum across dimensions = [1] : (tensor<4x8xbf16>, tensor<bf16>) -> tensor<4xbf16>
    %cst_1 = stablehlo.constant dense<0xFF80> : tensor<bf16>
    %13 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<bf16>) -> tensor<4xbf16>
    %14 = stablehlo.maximum %13, %12 : tensor<4xbf16>
    %15 = stablehlo.broadcast_in_dim %14, dims = [0] : (tensor<4xbf16>) -> tensor<4x1xbf16>
    %16 = stablehlo.broadcast_in_dim %15, dims = [0, 1] : (tensor<4x1xbf16>) -> tensor<4x8xbf16>
    %17 = stablehlo.subtract %arg0, %16 : tensor<4x8xbf16>
    %18 = stablehlo.exponential %17 : tensor<4x8xbf16>
    %19 = stablehlo.convert %18 : (tensor<4x8xbf16>) -> tensor<4x8xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %20 = stablehlo.reduce(%19 init: %cst_2) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
    %21 = stablehlo.broadcast_in_dim %20, dims = [0] : (tensor<4xf32>) -> tensor<4x1xf32>
    %22 = stablehlo.convert %21 : (tensor<4x1xf32>) -> tensor<4x1xbf16>
    %23 = stablehlo.broadcast_in_dim %22, dims = [0, 1] : (tensor<4x1xbf16>) -> tensor<4x8xbf16>
    %24 = stablehlo.divide %18, %23 : tensor<4x8xbf16>
    return %1, %2, %3, %6, %7, %8, %9, %11, %24 : tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4xbf16>, tensor<4x3xf32>, tensor<4x3xbf16>, tensor<4x8xbf16>, tensor<4x8xf32>, tensor<4x8xbf16>
  }
}
