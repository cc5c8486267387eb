module @jit_layernorm_gelu_erf attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x16xf32>, %arg1: tensor<16xf32>, %arg2: tensor<16xf32>) -> (tensor<4x16xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<4x16xf32>, tensor<f32>) -> tensor<4xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<4xf32>) -> tensor<4x1xf32>
    %cst_0 = stablehlo.constant dense<1.600000e+01> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4x1xf32>
    %3 = stablehlo.divide %1, %2 : tensor<4x1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x16xf32>
    %5 = stablehlo.subtract %arg0, %4 : tensor<4x16xf32>
    %6 = stablehlo.multiply %5, %5 : tensor<4x16xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %cst_1) applies stablehlo.add across dimensions = [1] : (tensor<4x16xf32>, tensor<f32>) -> tensor<4xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0] : (tensor<4xf32>) -> tensor<4x1xf32>
    %cst_2 = stablehlo.constant dense<1.600000e+01> : tensor<f32>
    %9 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<4x1xf32>
    %10 = stablehlo.divide %8, %9 : tensor<4x1xf32>
    %11 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x16xf32>
    %12 = stablehlo.subtract %arg0, %11 : tensor<4x16xf32>
    %cst_3 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %13 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<4x1xf32>
    %14 = stablehlo.add %10, %13 : tensor<4x1xf32>
    %15 = stablehlo.rsqrt %14 : tensor<4x1xf32>
    %16 = stablehlo.broadcast_in_dim %15, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x16xf32>
    %17 = stablehlo.multiply %12, %16 : tensor<4x16xf32>
    %18 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<16xf32>) -> tensor<1x16xf32>
    %19 = stablehlo.broadcast_in_dim %18, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<4x16xf32>
    %20 = stablehlo.multiply %17, %19 : tensor<4x16xf32>
    %21 = stablehlo.broadcast_in_dim %arg2, dims = [1] : (tensor<16xf32>) -> tensor<1x16xf32>
    %22 = stablehlo.broadcast_in_dim %21, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<4x16xf32>
    %23 = stablehlo.add %20, %22 : tensor<4x16xf32>
    %cst_4 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %24 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<4x16xf32>
    %25 = stablehlo.multiply %24, %23 : tensor<4x16xf32>
    %26 = stablehlo.negate %23 : tensor<4x16xf32>
    %cst_5 = stablehlo.constant dense<0.707106769> : tensor<f32>
    %27 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<4x16xf32>
    %28 = stablehlo.multiply %26, %27 : tensor<4x16xf32>
    %29 = chlo.erfc %28 : tensor<4x16xf32> -> tensor<4x16xf32>
    %30 = stablehlo.multiply %25, %29 : tensor<4x16xf32>
    return %30 : tensor<4x16xf32>
  }
}
