module @jit_reductions attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x4x5xf32>, %arg1: tensor<3x4x5xi32>, %arg2: tensor<3x4x5xi1>) -> (tensor<f32> {jax.result_info = "result[0]"}, tensor<4x5xf32> {jax.result_info = "result[1]"}, tensor<3xf32> {jax.result_info = "result[2]"}, tensor<3x1x5xf32> {jax.result_info = "result[3]"}, tensor<3x4xf32> {jax.result_info = "result[4]"}, tensor<4x5xf32> {jax.result_info = "result[5]"}, tensor<1x4x1xf32> {jax.result_info = "result[6]"}, tensor<3x5xi32> {jax.result_info = "result[7]"}, tensor<4xi32> {jax.result_info = "result[8]"}, tensor<i32> {jax.result_info = "result[9]"}, tensor<3x2xi32> {jax.result_info = "result[10]"}, tensor<4x5xi1> {jax.result_info = "result[11]"}, tensor<3x4xi1> {jax.result_info = "result[12]"}, tensor<3x4xf32> {jax.result_info = "result[13]"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<3x4x5xf32>, tensor<f32>) -> tensor<f32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%arg0 init: %cst_0) applies stablehlo.add across dimensions = [0] : (tensor<3x4x5xf32>, tensor<f32>) -> tensor<4x5xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.reduce(%arg0 init: %cst_1) applies stablehlo.add across dimensions = [1, 2] : (tensor<3x4x5xf32>, tensor<f32>) -> tensor<3xf32>
    %cst_2 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %3 = stablehlo.reduce(%arg0 init: %cst_2) applies stablehlo.maximum across dimensions = [1] : (tensor<3x4x5xf32>, tensor<f32>) -> tensor<3x5xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 2] : (tensor<3x5xf32>) -> tensor<3x1x5xf32>
    %cst_3 = stablehlo.constant dense<0x7F800000> : tensor<f32>
    %5 = stablehlo.reduce(%arg0 init: %cst_3) applies stablehlo.minimum across dimensions = [2] : (tensor<3x4x5xf32>, tensor<f32>) -> tensor<3x4xf32>
    %cst_4 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %6 = stablehlo.reduce(%arg0 init: %cst_4) applies stablehlo.multiply across dimensions = [0] : (tensor<3x4x5xf32>, tensor<f32>) -> tensor<4x5xf32>
    %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%arg0 init: %cst_5) applies stablehlo.add across dimensions = [0, 2] : (tensor<3x4x5xf32>, tensor<f32>) -> tensor<4xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [1] : (tensor<4xf32>) -> tensor<1x4x1xf32>
    %cst_6 = stablehlo.constant dense<1.500000e+01> : tensor<f32>
    %9 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<1x4x1xf32>
    %10 = stablehlo.divide %8, %9 : tensor<1x4x1xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %11 = stablehlo.reduce(%arg1 init: %c) applies stablehlo.add across dimensions = [1] : (tensor<3x4x5xi32>, tensor<i32>) -> tensor<3x5xi32>
    %c_7 = stablehlo.constant dense<-2147483648> : tensor<i32>
    %12 = stablehlo.reduce(%arg1 init: %c_7) applies stablehlo.maximum across dimensions = [0, 2] : (tensor<3x4x5xi32>, tensor<i32>) -> tensor<4xi32>
    %c_8 = stablehlo.constant dense<2147483647> : tensor<i32>
    %13 = stablehlo.reduce(%arg1 init: %c_8) applies stablehlo.minimum across dimensions = [0, 1, 2] : (tensor<3x4x5xi32>, tensor<i32>) -> tensor<i32>
    %14 = stablehlo.slice %arg1 [0:3, 0:2, 0:3] : (tensor<3x4x5xi32>) -> tensor<3x2x3xi32>
    %c_9 = stablehlo.constant dense<1> : tensor<i32>
    %15 = stablehlo.reduce(%14 init: %c_9) applies stablehlo.multiply across dimensions = [2] : (tensor<3x2x3xi32>, tensor<i32>) -> tensor<3x2xi32>
    %c_10 = stablehlo.constant dense<false> : tensor<i1>
    %16 = stablehlo.reduce(%arg2 init: %c_10) applies stablehlo.or across dimensions = [0] : (tensor<3x4x5xi1>, tensor<i1>) -> tensor<4x5xi1>
    %c_11 = stablehlo.constant dense<true> : tensor<i1>
    %17 = stablehlo.reduce(%arg2 init: %c_11) applies stablehlo.and across dimensions = [2] : (tensor<3x4x5xi1>, tensor<i1>) -> tensor<3x4xi1>
    %cst_12 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %18 = stablehlo.broadcast_in_dim %cst_12, dims = [] : (tensor<f32>) -> tensor<3x4x5xf32>
    %19 = stablehlo.compare GT, %arg0, %18, FLOAT : (tensor<3x4x5xf32>, tensor<3x4x5xf32>) -> tensor<3x4x5xi1>
    %cst_13 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %20 = call @_where(%19, %cst_13, %arg0) : (tensor<3x4x5xi1>, tensor<f32>, tensor<3x4x5xf32>) -> tensor<3x4x5xf32>
    %cst_14 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %21 = stablehlo.reduce(%20 init: %cst_14) applies stablehlo.maximum across dimensions = [2] : (tensor<3x4x5xf32>, tensor<f32>) -> tensor<3x4xf32>
    return %0, %1, %2, %4, %5, %6, %10, %11, %12, %13, %15, %16, %17, %21 : tensor<f32>, tensor<4x5xf32>, tensor<3xf32>, tensor<3x1x5xf32>, tensor<3x4xf32>, tensor<4x5xf32>, tensor<1x4x1xf32>, tensor<3x5xi32>, tensor<4xi32>, tensor<i32>, tensor<3x2xi32>, tensor<4x5xi1>, tensor<3x4xi1>, tensor<3x4xf32>
  }
  func.func private @_where(%arg0: tensor<3x4x5xi1>, %arg1: tensor<f32>, %arg2: tensor<3x4x5xf32>) -> tensor<3x4x5xf32> {
    %0 = stablehlo.convert %arg1 : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<3x4x5xf32>
    %2 = stablehlo.select %arg0, %1, %arg2 : tensor<3x4x5xi1>, tensor<3x4x5xf32>
    return %2 : tensor<3x4x5xf32>
  }
}
