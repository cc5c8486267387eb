module @jit_cond_switch attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<i1>, %arg1: tensor<i32>, %arg2: tensor<4xf32>) -> (tensor<4xf32> {jax.result_info = "result[0]"}, tensor<f32> {jax.result_info = "result[1]"}, tensor<4xf32> {jax.result_info = "result[2]"}, tensor<4xf32> {jax.result_info = "result[3]"}) {
    %0 = stablehlo.convert %arg0 : (tensor<i1>) -> tensor<i32>
    %1:2 = "stablehlo.case"(%0) ({
      %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
      %7 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4xf32>
      %8 = stablehlo.multiply %arg2, %7 : tensor<4xf32>
      %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %9 = stablehlo.reduce(%arg2 init: %cst_4) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
      %10 = stablehlo.negate %9 : tensor<f32>
      stablehlo.return %8, %10 : tensor<4xf32>, tensor<f32>
    }, {
      %7 = stablehlo.sine %arg2 : tensor<4xf32>
      %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %8 = stablehlo.reduce(%arg2 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
      stablehlo.return %7, %8 : tensor<4xf32>, tensor<f32>
    }) : (tensor<i32>) -> (tensor<4xf32>, tensor<f32>)
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<2> : tensor<i32>
    %2 = stablehlo.clamp %c, %arg1, %c_0 : tensor<i32>
    %3 = "stablehlo.case"(%2) ({
      %7 = stablehlo.exponential %arg2 : tensor<4xf32>
      stablehlo.return %7 : tensor<4xf32>
    }, {
      %7 = stablehlo.cosine %arg2 : tensor<4xf32>
      stablehlo.return %7 : tensor<4xf32>
    }, {
      %7 = stablehlo.reverse %arg2, dims = [0] : tensor<4xf32>
      stablehlo.return %7 : tensor<4xf32>
    }) : (tensor<i32>) -> tensor<4xf32>
    %c_1 = stablehlo.constant dense<5> : tensor<i32>
    %4 = stablehlo.add %arg1, %c_1 : tensor<i32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %c_3 = stablehlo.constant dense<2> : tensor<i32>
    %5 = stablehlo.clamp %c_2, %4, %c_3 : tensor<i32>
    %6 = "stablehlo.case"(%5) ({
      %7 = stablehlo.exponential %arg2 : tensor<4xf32>
      stablehlo.return %7 : tensor<4xf32>
    }, {
      %7 = stablehlo.cosine %arg2 : tensor<4xf32>
      stablehlo.return %7 : tensor<4xf32>
    }, {
      %7 = stablehlo.reverse %arg2, dims = [0] : tensor<4xf32>
      stablehlo.return %7 : tensor<4xf32>
    }) : (tensor<i32>) -> tensor<4xf32>
    return %1#0, %1#1, %3, %6 : tensor<4xf32>, tensor<f32>, tensor<4xf32>, tensor<4xf32>
  }
}
