module @jit_matmul_einsum attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x8xf32>, %arg1: tensor<8x3xf32>, %arg2: tensor<3x4x5xf32>, %arg3: tensor<3x5x2xf32>, %arg4: tensor<8xf32>, %arg5: tensor<3x5xi32>, %arg6: tensor<5x2xi32>) -> (tensor<4x3xf32> {jax.result_info = "result[0]"}, tensor<4xf32> {jax.result_info = "result[1]"}, tensor<f32> {jax.result_info = "result[2]"}, tensor<3x4x2xf32> {jax.result_info = "result[3]"}, tensor<3x4x4xf32> {jax.result_info = "result[4]"}, tensor<3x3xf32> {jax.result_info = "result[5]"}, tensor<8x8xf32> {jax.result_info = "result[6]"}, tensor<3x2xi32> {jax.result_info = "result[7]"}, tensor<3xf32> {jax.result_info = "result[8]"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
    %1 = stablehlo.dot_general %arg0, %arg4, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4xf32>
    %2 = stablehlo.dot_general %arg4, %arg4, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8xf32>, tensor<8xf32>) -> tensor<f32>
    %3 = stablehlo.dot_general %arg2, %arg3, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<3x4x5xf32>, tensor<3x5x2xf32>) -> tensor<3x4x2xf32>
    %4 = stablehlo.dot_general %arg2, %arg2, batching_dims = [0] x [0], contracting_dims = [2] x [2], precision = [DEFAULT, DEFAULT] : (tensor<3x4x5xf32>, tensor<3x4x5xf32>) -> tensor<3x4x4xf32>
    %5 = stablehlo.dot_general %arg2, %arg2, contracting_dims = [1, 2] x [1, 2], precision = [DEFAULT, DEFAULT] : (tensor<3x4x5xf32>, tensor<3x4x5xf32>) -> tensor<3x3xf32>
    %6 = stablehlo.dot_general %arg4, %arg4, contracting_dims = [] x [], precision = [DEFAULT, DEFAULT] : (tensor<8xf32>, tensor<8xf32>) -> tensor<8x8xf32>
    %7 = stablehlo.dot_general %arg5, %arg6, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<3x5xi32>, tensor<5x2xi32>) -> tensor<3x2xi32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %8 = stablehlo.reduce(%arg2 init: %cst) applies stablehlo.add across dimensions = [1, 2] : (tensor<3x4x5xf32>, tensor<f32>) -> tensor<3xf32>
    return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<4x3xf32>, tensor<4xf32>, tensor<f32>, tensor<3x4x2xf32>, tensor<3x4x4xf32>, tensor<3x3xf32>, tensor<8x8xf32>, tensor<3x2xi32>, tensor<3xf32>
  }
}
