module @jit_avg_pool attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1x5x5x2xf32>, %arg1: tensor<4x5xi32>) -> (tensor<1x3x3x2xf32> {jax.result_info = "result[0]"}, tensor<9x4xf32> {jax.result_info = "result[1]"}, tensor<2x4xi32> {jax.result_info = "result[2]"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<f32>
    %1 = "stablehlo.reduce_window"(%arg0, %0) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<[[0, 0], [1, 1], [1, 1], [0, 0]]> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 3, 3, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %12 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %12 : tensor<f32>
    }) : (tensor<1x5x5x2xf32>, tensor<f32>) -> tensor<1x3x3x2xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<1x5x5x2xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<f32>
    %4 = "stablehlo.reduce_window"(%2, %3) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<[[0, 0], [1, 1], [1, 1], [0, 0]]> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 3, 3, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %12 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %12 : tensor<f32>
    }) : (tensor<1x5x5x2xf32>, tensor<f32>) -> tensor<1x3x3x2xf32>
    %5 = stablehlo.slice %arg0 [0:1, 0:5, 0:5, 0:1] : (tensor<1x5x5x2xf32>) -> tensor<1x5x5x1xf32>
    %6 = stablehlo.reshape %5 : (tensor<1x5x5x1xf32>) -> tensor<5x5xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<f32>
    %8 = "stablehlo.reduce_window"(%6, %7) <{base_dilations = array<i64: 2, 1>, padding = dense<[[1, 0], [0, 1]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 2>, window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %12 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %12 : tensor<f32>
    }) : (tensor<5x5xf32>, tensor<f32>) -> tensor<9x4xf32>
    %c = stablehlo.constant dense<2147483647> : tensor<i32>
    %9 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<i32>
    %10 = "stablehlo.reduce_window"(%arg1, %9) <{base_dilations = array<i64: 1, 1>, padding = dense<0> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 1>}> ({
    ^bb0(%arg2: tensor<i32>, %arg3: tensor<i32>):
      %12 = stablehlo.minimum %arg2, %arg3 : tensor<i32>
      stablehlo.return %12 : tensor<i32>
    }) : (tensor<4x5xi32>, tensor<i32>) -> tensor<2x4xi32>
    %11 = stablehlo.divide %1, %4 : tensor<1x3x3x2xf32>
    return %11, %8, %10 : tensor<1x3x3x2xf32>, tensor<9x4xf32>, tensor<2x4xi32>
  }
}
