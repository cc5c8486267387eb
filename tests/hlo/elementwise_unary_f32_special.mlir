module @jit_elementwise_unary_f32_special attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<24xf32>) -> (tensor<24xf32> {jax.result_info = "result[0]"}, tensor<24xf32> {jax.result_info = "result[1]"}, tensor<24xf32> {jax.result_info = "result[2]"}, tensor<24xf32> {jax.result_info = "result[3]"}, tensor<24xf32> {jax.result_info = "result[4]"}, tensor<24xf32> {jax.result_info = "result[5]"}, tensor<24xf32> {jax.result_info = "result[6]"}, tensor<24xf32> {jax.result_info = "result[7]"}, tensor<24xf32> {jax.result_info = "result[8]"}, tensor<24xf32> {jax.result_info = "result[9]"}, tensor<24xf32> {jax.result_info = "result[10]"}, tensor<24xf32> {jax.result_info = "result[11]"}, tensor<24xf32> {jax.result_info = "result[12]"}, tensor<24xf32> {jax.result_info = "result[13]"}, tensor<24xf32> {jax.result_info = "result[14]"}, tensor<24xf32> {jax.result_info = "result[15]"}, tensor<24xf32> {jax.result_info = "result[16]"}, tensor<24xf32> {jax.result_info = "result[17]"}, tensor<24xf32> {jax.result_info = "result[18]"}, tensor<24xi1> {jax.result_info = "result[19]"}) {
    %0 = stablehlo.exponential %arg0 : tensor<24xf32>
    %1 = stablehlo.log %arg0 : tensor<24xf32>
    %2 = stablehlo.log_plus_one %arg0 : tensor<24xf32>
    %3 = stablehlo.exponential_minus_one %arg0 : tensor<24xf32>
    %4 = stablehlo.tanh %arg0 : tensor<24xf32>
    %5 = stablehlo.sqrt %arg0 : tensor<24xf32>
    %6 = stablehlo.rsqrt %arg0 : tensor<24xf32>
    %7 = stablehlo.cbrt %arg0 : tensor<24xf32>
    %8 = stablehlo.sine %arg0 : tensor<24xf32>
    %9 = stablehlo.cosine %arg0 : tensor<24xf32>
    %10 = stablehlo.tan %arg0 : tensor<24xf32>
    %11 = chlo.erf %arg0 : tensor<24xf32> -> tensor<24xf32>
    %12 = stablehlo.abs %arg0 : tensor<24xf32>
    %13 = stablehlo.sign %arg0 : tensor<24xf32>
    %14 = stablehlo.negate %arg0 : tensor<24xf32>
    %15 = stablehlo.floor %arg0 : tensor<24xf32>
    %16 = stablehlo.ceil %arg0 : tensor<24xf32>
    %17 = stablehlo.round_nearest_afz %arg0 : tensor<24xf32>
    %18 = call @round(%arg0) : (tensor<24xf32>) -> tensor<24xf32>
    %19 = stablehlo.is_finite %arg0 : (tensor<24xf32>) -> tensor<24xi1>
    return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19 : tensor<24xf32>, tensor<24xf32>, tensor<24xf32>, tensor<24xf32>, tensor<24xf32>, tensor<24xf32>, tensor<24xf32>, tensor<24xf32>, tensor<24xf32>, tensor<24xf32>, tensor<24xf32>, tensor<24xf32>, tensor<24xf32>, tensor<24xf32>, tensor<24xf32>, tensor<24xf32>, tensor<24xf32>, tensor<24xf32>, tensor<24xf32>, tensor<24xi1>
  }
  func.func private @round(%arg0: tensor<24xf32>) -> tensor<24xf32> {
    %0 = stablehlo.round_nearest_even %arg0 : tensor<24xf32>
    return %0 : tensor<24xf32>
  }
}
