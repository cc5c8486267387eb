module @jit_shape_ops attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3x4xf32>, %arg1: tensor<4xf32>) -> (tensor<4x2x3xf32> {jax.result_info = "result[0]"}, tensor<6x4xf32> {jax.result_info = "result[1]"}, tensor<6x4xf32> {jax.result_info = "result[2]"}, tensor<4x2x3x4xf32> {jax.result_info = "result[3]"}, tensor<3x4xf32> {jax.result_info = "result[4]"}, tensor<4x4xf32> {jax.result_info = "result[5]"}, tensor<3x4xf32> {jax.result_info = "result[6]"}, tensor<24xf32> {jax.result_info = "result[7]"}, tensor<4x3x2xf32> {jax.result_info = "result[8]"}, tensor<2x3x4xf32> {jax.result_info = "result[9]"}, tensor<4xf32> {jax.result_info = "result[10]"}) {
    %cst = stablehlo.constant dense<[[[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00], [8.000000e+00, 9.000000e+00, 1.000000e+01, 1.100000e+01]], [[1.200000e+01, 1.300000e+01, 1.400000e+01, 1.500000e+01], [1.600000e+01, 1.700000e+01, 1.800000e+01, 1.900000e+01], [2.000000e+01, 2.100000e+01, 2.200000e+01, 2.300000e+01]]]> : tensor<2x3x4xf32>
    %cst_0 = stablehlo.constant dense<[-1.000000e+00, -0.333333343, 0.333333343, 1.000000e+00]> : tensor<4xf32>
    %0 = stablehlo.transpose %arg0, dims = [2, 0, 1] : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
    %1 = stablehlo.reshape %arg0 : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
    %2 = stablehlo.reshape %arg0 : (tensor<2x3x4xf32>) -> tensor<4x6xf32>
    %3 = stablehlo.transpose %2, dims = [1, 0] : (tensor<4x6xf32>) -> tensor<6x4xf32>
    %4 = stablehlo.broadcast_in_dim %arg0, dims = [1, 2, 3] : (tensor<2x3x4xf32>) -> tensor<1x2x3x4xf32>
    %5 = stablehlo.broadcast_in_dim %arg1, dims = [0] : (tensor<4xf32>) -> tensor<4x1x1x1xf32>
    %6 = stablehlo.broadcast_in_dim %4, dims = [0, 1, 2, 3] : (tensor<1x2x3x4xf32>) -> tensor<4x2x3x4xf32>
    %7 = stablehlo.broadcast_in_dim %5, dims = [0, 1, 2, 3] : (tensor<4x1x1x1xf32>) -> tensor<4x2x3x4xf32>
    %8 = stablehlo.add %6, %7 : tensor<4x2x3x4xf32>
    %9 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<4xf32>) -> tensor<3x4xf32>
    %10 = stablehlo.broadcast_in_dim %arg1, dims = [0] : (tensor<4xf32>) -> tensor<4x1xf32>
    %11 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<4xf32>) -> tensor<1x4xf32>
    %12 = stablehlo.broadcast_in_dim %10, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x4xf32>
    %13 = stablehlo.broadcast_in_dim %11, dims = [0, 1] : (tensor<1x4xf32>) -> tensor<4x4xf32>
    %14 = stablehlo.multiply %12, %13 : tensor<4x4xf32>
    %15 = stablehlo.slice %arg0 [0:1, 0:3, 0:4] : (tensor<2x3x4xf32>) -> tensor<1x3x4xf32>
    %16 = stablehlo.reshape %15 : (tensor<1x3x4xf32>) -> tensor<3x4xf32>
    %17 = stablehlo.reshape %0 : (tensor<4x2x3xf32>) -> tensor<24xf32>
    %18 = stablehlo.transpose %arg0, dims = [2, 1, 0] : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
    %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %19 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<4x3x2xf32>
    %20 = stablehlo.add %18, %19 : tensor<4x3x2xf32>
    %21 = stablehlo.multiply %arg0, %cst : tensor<2x3x4xf32>
    %22 = stablehlo.subtract %arg1, %cst_0 : tensor<4xf32>
    return %0, %1, %3, %8, %9, %14, %16, %17, %20, %21, %22 : tensor<4x2x3xf32>, tensor<6x4xf32>, tensor<6x4xf32>, tensor<4x2x3x4xf32>, tensor<3x4xf32>, tensor<4x4xf32>, tensor<3x4xf32>, tensor<24xf32>, tensor<4x3x2xf32>, tensor<2x3x4xf32>, tensor<4xf32>
  }
}
