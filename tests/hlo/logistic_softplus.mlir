module @jit_logistic_softplus attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<16xf32>) -> (tensor<16xf32> {jax.result_info = "result[0]"}, tensor<16xf32> {jax.result_info = "result[1]"}, tensor<16xf32> {jax.result_info = "result[2]"}, tensor<16xf32> {jax.result_info = "result[3]"}, tensor<16xf32> {jax.result_info = "result[4]"}) {
    %0 = stablehlo.negate %arg0 : tensor<16xf32>
    %1 = stablehlo.exponential %0 : tensor<16xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %3 = stablehlo.add %2, %1 : tensor<16xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %5 = stablehlo.divide %4, %3 : tensor<16xf32>
    %6 = stablehlo.negate %arg0 : tensor<16xf32>
    %7 = stablehlo.exponential %6 : tensor<16xf32>
    %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %8 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %9 = stablehlo.add %8, %7 : tensor<16xf32>
    %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %10 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %11 = stablehlo.divide %10, %9 : tensor<16xf32>
    %12 = call @softplus(%arg0) : (tensor<16xf32>) -> tensor<16xf32>
    %13 = call @relu(%arg0) : (tensor<16xf32>) -> tensor<16xf32>
    %14 = call @silu(%arg0) : (tensor<16xf32>) -> tensor<16xf32>
    return %5, %11, %12, %13, %14 : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
  }
  func.func private @softplus(%arg0: tensor<16xf32>) -> tensor<16xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<16xf32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %3 = stablehlo.subtract %arg0, %2 : tensor<16xf32>
    %4 = stablehlo.compare NE, %3, %3, FLOAT : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xi1>
    %5 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %6 = stablehlo.add %arg0, %5 : tensor<16xf32>
    %7 = stablehlo.abs %3 : tensor<16xf32>
    %8 = stablehlo.negate %7 : tensor<16xf32>
    %9 = stablehlo.exponential %8 : tensor<16xf32>
    %10 = stablehlo.log_plus_one %9 : tensor<16xf32>
    %11 = stablehlo.add %1, %10 : tensor<16xf32>
    %12 = stablehlo.select %4, %6, %11 : tensor<16xi1>, tensor<16xf32>
    return %12 : tensor<16xf32>
  }
  func.func private @relu(%arg0: tensor<16xf32>) -> tensor<16xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<16xf32>
    return %1 : tensor<16xf32>
  }
  func.func private @silu(%arg0: tensor<16xf32>) -> tensor<16xf32> {
    %0 = stablehlo.negate %arg0 : tensor<16xf32>
    %1 = stablehlo.exponential %0 : tensor<16xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %3 = stablehlo.add %2, %1 : tensor<16xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %5 = stablehlo.divide %4, %3 : tensor<16xf32>
    %6 = stablehlo.multiply %arg0, %5 : tensor<16xf32>
    return %6 : tensor<16xf32>
  }
}
