module @jit_nested_call attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6xf32>, %arg1: tensor<6xf32>) -> (tensor<6xf32> {jax.result_info = "result[0]"}, tensor<6xf32> {jax.result_info = "result[1]"}) {
    %0 = call @_inner_jit(%arg0, %arg1) : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
    %1 = call @_inner_jit(%arg1, %arg0) : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<6xf32>
    %3 = stablehlo.multiply %1, %2 : tensor<6xf32>
    %4 = stablehlo.add %0, %3 : tensor<6xf32>
    %5 = call @_inner_jit(%arg0, %arg0) : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
    return %4, %5 : tensor<6xf32>, tensor<6xf32>
  }
  func.func private @_inner_jit(%arg0: tensor<6xf32>, %arg1: tensor<6xf32>) -> tensor<6xf32> {
    %0 = stablehlo.sine %arg0 : tensor<6xf32>
    %1 = stablehlo.multiply %0, %arg1 : tensor<6xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<6xf32>
    %3 = stablehlo.add %1, %2 : tensor<6xf32>
    return %3 : tensor<6xf32>
  }
}
