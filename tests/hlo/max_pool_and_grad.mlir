module @jit_max_pool_and_grad attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1x6x6x2xf32>, %arg1: tensor<1x3x3x2xf32>) -> (tensor<1x3x3x2xf32> {jax.result_info = "result[0]"}, tensor<1x6x6x2xf32> {jax.result_info = "result[1]"}, tensor<1x6x6x2xf32> {jax.result_info = "result[2]"}, tensor<1x6x6x2xf32> {jax.result_info = "result[3]"}) {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<f32>
    %1 = "stablehlo.reduce_window"(%arg0, %0) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<0> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %11 = stablehlo.maximum %arg2, %arg3 : tensor<f32>
      stablehlo.return %11 : tensor<f32>
    }) : (tensor<1x6x6x2xf32>, tensor<f32>) -> tensor<1x3x3x2xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<f32>
    %3 = "stablehlo.reduce_window"(%arg0, %2) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<[[0, 0], [1, 1], [1, 1], [0, 0]]> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 3, 3, 1>, window_strides = array<i64: 1, 1, 1, 1>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %11 = stablehlo.maximum %arg2, %arg3 : tensor<f32>
      stablehlo.return %11 : tensor<f32>
    }) : (tensor<1x6x6x2xf32>, tensor<f32>) -> tensor<1x6x6x2xf32>
    %cst_1 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %4 = stablehlo.pad %arg0, %cst_1, low = [0, 0, 0, 0], high = [0, 0, 0, 0], interior = [0, 0, 0, 0] : (tensor<1x6x6x2xf32>, tensor<f32>) -> tensor<1x6x6x2xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %5 = "stablehlo.select_and_scatter"(%4, %arg1, %cst_2) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %11 = stablehlo.compare GE, %arg2, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %11 : tensor<i1>
    }, {
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %11 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %11 : tensor<f32>
    }) : (tensor<1x6x6x2xf32>, tensor<1x3x3x2xf32>, tensor<f32>) -> tensor<1x6x6x2xf32>
    %6 = stablehlo.slice %5 [0:1, 0:6, 0:6, 0:2] : (tensor<1x6x6x2xf32>) -> tensor<1x6x6x2xf32>
    %cst_3 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<1x6x6x2xf32>
    %cst_4 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %8 = stablehlo.pad %arg0, %cst_4, low = [0, 1, 1, 0], high = [0, 1, 1, 0], interior = [0, 0, 0, 0] : (tensor<1x6x6x2xf32>, tensor<f32>) -> tensor<1x8x8x2xf32>
    %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %9 = "stablehlo.select_and_scatter"(%8, %7, %cst_5) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 3, 3, 1>, window_strides = array<i64: 1, 1, 1, 1>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %11 = stablehlo.compare GE, %arg2, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %11 : tensor<i1>
    }, {
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %11 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %11 : tensor<f32>
    }) : (tensor<1x8x8x2xf32>, tensor<1x6x6x2xf32>, tensor<f32>) -> tensor<1x8x8x2xf32>
    %10 = stablehlo.slice %9 [0:1, 1:7, 1:7, 0:2] : (tensor<1x8x8x2xf32>) -> tensor<1x6x6x2xf32>
    return %1, %6, %3, %10 : tensor<1x3x3x2xf32>, tensor<1x6x6x2xf32>, tensor<1x6x6x2xf32>, tensor<1x6x6x2xf32>
  }
}
