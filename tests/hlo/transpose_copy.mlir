module @jit_transpose_copy attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3x4xf32>, %arg1: tensor<2x5xf32>) -> (tensor<3x2x4xf32> {jax.result_info = "result[0]"}, tensor<60xf32> {jax.result_info = "result[1]"}, tensor<4x6xf32> {jax.result_info = "result[2]"}) {
    %0 = stablehlo.transpose %arg0, dims = [1, 0, 2] : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3x2x4xf32>
    %2 = stablehlo.multiply %0, %1 : tensor<3x2x4xf32>
    %3 = stablehlo.transpose %arg0, dims = [2, 1, 0] : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
    %4 = stablehlo.dot_general %3, %arg1, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x3x2xf32>, tensor<2x5xf32>) -> tensor<4x3x5xf32>
    %5 = stablehlo.reshape %4 : (tensor<4x3x5xf32>) -> tensor<60xf32>
    %6 = stablehlo.transpose %arg0, dims = [2, 1, 0] : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
    %7 = stablehlo.reshape %6 : (tensor<4x3x2xf32>) -> tensor<4x6xf32>
    return %2, %5, %7 : tensor<3x2x4xf32>, tensor<60xf32>, tensor<4x6xf32>
  }
}
