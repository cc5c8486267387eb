module @jit_softmax attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x7xf32>) -> (tensor<4x7xf32> {jax.result_info = "result[0]"}, tensor<4x7xf32> {jax.result_info = "result[1]"}, tensor<4x7xf32> {jax.result_info = "result[2]"}) {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<4x7xf32>, tensor<f32>) -> tensor<4xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %2 = stablehlo.maximum %1, %0 : tensor<4xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0] : (tensor<4xf32>) -> tensor<4x1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x7xf32>
    %5 = stablehlo.subtract %arg0, %4 : tensor<4x7xf32>
    %6 = stablehlo.exponential %5 : tensor<4x7xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %cst_1) applies stablehlo.add across dimensions = [1] : (tensor<4x7xf32>, tensor<f32>) -> tensor<4xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0] : (tensor<4xf32>) -> tensor<4x1xf32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x7xf32>
    %10 = stablehlo.divide %6, %9 : tensor<4x7xf32>
    %cst_2 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %11 = stablehlo.reduce(%arg0 init: %cst_2) applies stablehlo.maximum across dimensions = [0] : (tensor<4x7xf32>, tensor<f32>) -> tensor<7xf32>
    %cst_3 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<7xf32>
    %13 = stablehlo.maximum %12, %11 : tensor<7xf32>
    %14 = stablehlo.broadcast_in_dim %13, dims = [1] : (tensor<7xf32>) -> tensor<1x7xf32>
    %15 = stablehlo.broadcast_in_dim %14, dims = [0, 1] : (tensor<1x7xf32>) -> tensor<4x7xf32>
    %16 = stablehlo.subtract %arg0, %15 : tensor<4x7xf32>
    %17 = stablehlo.exponential %16 : tensor<4x7xf32>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %18 = stablehlo.reduce(%17 init: %cst_4) applies stablehlo.add across dimensions = [0] : (tensor<4x7xf32>, tensor<f32>) -> tensor<7xf32>
    %19 = stablehlo.broadcast_in_dim %18, dims = [1] : (tensor<7xf32>) -> tensor<1x7xf32>
    %20 = stablehlo.broadcast_in_dim %19, dims = [0, 1] : (tensor<1x7xf32>) -> tensor<4x7xf32>
    %21 = stablehlo.divide %17, %20 : tensor<4x7xf32>
    %22 = call @log_softmax(%arg0) : (tensor<4x7xf32>) -> tensor<4x7xf32>
    return %10, %21, %22 : tensor<4x7xf32>, tensor<4x7xf32>, tensor<4x7xf32>
  }
  func.func private @log_softmax(%arg0: tensor<4x7xf32>) -> tensor<4x7xf32> {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<4x7xf32>, tensor<f32>) -> tensor<4xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %2 = stablehlo.maximum %1, %0 : tensor<4xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0] : (tensor<4xf32>) -> tensor<4x1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x7xf32>
    %5 = stablehlo.subtract %arg0, %4 : tensor<4x7xf32>
    %6 = stablehlo.exponential %5 : tensor<4x7xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %cst_1) applies stablehlo.add across dimensions = [1] : (tensor<4x7xf32>, tensor<f32>) -> tensor<4xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0] : (tensor<4xf32>) -> tensor<4x1xf32>
    %9 = stablehlo.log %8 : tensor<4x1xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x7xf32>
    %11 = stablehlo.subtract %5, %10 : tensor<4x7xf32>
    return %11 : tensor<4x7xf32>
  }
}
