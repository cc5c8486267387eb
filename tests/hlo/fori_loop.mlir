module @jit_fori_loop attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5xf32>, %arg1: tensor<i32>) -> (tensor<5xf32> {jax.result_info = "result[0]"}, tensor<5xf32> {jax.result_info = "result[1]"}, tensor<3xi32> {jax.result_info = "result[2]"}) {
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<5xf32>
    %1 = stablehlo.multiply %arg0, %0 : tensor<5xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %2:4 = stablehlo.while(%iterArg = %c_0, %iterArg_3 = %c, %iterArg_4 = %arg0, %iterArg_5 = %1) : tensor<i32>, tensor<i32>, tensor<5xf32>, tensor<5xf32>
    cond {
      %c_6 = stablehlo.constant dense<7> : tensor<i32>
      %5 = stablehlo.compare LT, %iterArg, %c_6, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %5 : tensor<i1>
    } do {
      %5:3 = func.call @closed_call(%iterArg_3, %iterArg_4, %iterArg_5) : (tensor<i32>, tensor<5xf32>, tensor<5xf32>) -> (tensor<i32>, tensor<5xf32>, tensor<5xf32>)
      %c_6 = stablehlo.constant dense<1> : tensor<i32>
      %6 = stablehlo.add %iterArg, %c_6 : tensor<i32>
      stablehlo.return %6, %5#0, %5#1, %5#2 : tensor<i32>, tensor<i32>, tensor<5xf32>, tensor<5xf32>
    }
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %3 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<3xi32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %4:3 = stablehlo.while(%iterArg = %c_2, %iterArg_3 = %arg1, %iterArg_4 = %3) : tensor<i32>, tensor<i32>, tensor<3xi32>
    cond {
      %5 = stablehlo.compare LT, %iterArg, %iterArg_3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %5 : tensor<i1>
    } do {
      %c_5 = stablehlo.constant dense<1> : tensor<i32>
      %5 = stablehlo.add %iterArg, %c_5 : tensor<i32>
      %6 = stablehlo.convert %iterArg : tensor<i32>
      %7 = stablehlo.broadcast_in_dim %6, dims = [] : (tensor<i32>) -> tensor<3xi32>
      %8 = stablehlo.add %iterArg_4, %7 : tensor<3xi32>
      stablehlo.return %5, %iterArg_3, %8 : tensor<i32>, tensor<i32>, tensor<3xi32>
    }
    return %2#2, %2#3, %4#2 : tensor<5xf32>, tensor<5xf32>, tensor<3xi32>
  }
  func.func private @closed_call(%arg0: tensor<i32>, %arg1: tensor<5xf32>, %arg2: tensor<5xf32>) -> (tensor<i32>, tensor<5xf32>, tensor<5xf32>) {
    %c = stablehlo.constant dense<1> : tensor<i32>
    %0 = stablehlo.add %arg0, %c : tensor<i32>
    %cst = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<5xf32>
    %2 = stablehlo.multiply %arg1, %1 : tensor<5xf32>
    %3 = stablehlo.sine %arg2 : tensor<5xf32>
    %4 = stablehlo.convert %arg0 : (tensor<i32>) -> tensor<f32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [] : (tensor<f32>) -> tensor<5xf32>
    %6 = stablehlo.multiply %3, %5 : tensor<5xf32>
    %7 = stablehlo.add %2, %6 : tensor<5xf32>
    %8 = stablehlo.add %arg2, %arg1 : tensor<5xf32>
    return %0, %7, %8 : tensor<i32>, tensor<5xf32>, tensor<5xf32>
  }
}
