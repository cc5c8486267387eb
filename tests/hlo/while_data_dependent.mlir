module @jit_while_data_dependent attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5xi32>, %arg1: tensor<4xf32>) -> (tensor<5xi32> {jax.result_info = "result[0]"}, tensor<5xi32> {jax.result_info = "result[1]"}, tensor<4xf32> {jax.result_info = "result[2]"}, tensor<i32> {jax.result_info = "result[3]"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %1:2 = stablehlo.while(%iterArg = %arg0, %iterArg_1 = %0) : tensor<5xi32>, tensor<5xi32>
    cond {
      %c_2 = stablehlo.constant dense<1> : tensor<i32>
      %3 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<5xi32>
      %4 = stablehlo.compare NE, %iterArg, %3, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
      %c_3 = stablehlo.constant dense<false> : tensor<i1>
      %5 = stablehlo.reduce(%4 init: %c_3) applies stablehlo.or across dimensions = [0] : (tensor<5xi1>, tensor<i1>) -> tensor<i1>
      stablehlo.return %5 : tensor<i1>
    } do {
      %c_2 = stablehlo.constant dense<1> : tensor<i32>
      %3 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<5xi32>
      %4 = stablehlo.compare EQ, %iterArg, %3, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
      %c_3 = stablehlo.constant dense<2> : tensor<i32>
      %5 = func.call @remainder(%iterArg, %c_3) : (tensor<5xi32>, tensor<i32>) -> tensor<5xi32>
      %c_4 = stablehlo.constant dense<0> : tensor<i32>
      %6 = stablehlo.broadcast_in_dim %c_4, dims = [] : (tensor<i32>) -> tensor<5xi32>
      %7 = stablehlo.compare EQ, %5, %6, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
      %c_5 = stablehlo.constant dense<2> : tensor<i32>
      %8 = func.call @floor_divide(%iterArg, %c_5) : (tensor<5xi32>, tensor<i32>) -> tensor<5xi32>
      %c_6 = stablehlo.constant dense<3> : tensor<i32>
      %9 = stablehlo.broadcast_in_dim %c_6, dims = [] : (tensor<i32>) -> tensor<5xi32>
      %10 = stablehlo.multiply %9, %iterArg : tensor<5xi32>
      %c_7 = stablehlo.constant dense<1> : tensor<i32>
      %11 = stablehlo.broadcast_in_dim %c_7, dims = [] : (tensor<i32>) -> tensor<5xi32>
      %12 = stablehlo.add %10, %11 : tensor<5xi32>
      %13 = func.call @_where_0(%7, %8, %12) : (tensor<5xi1>, tensor<5xi32>, tensor<5xi32>) -> tensor<5xi32>
      %14 = func.call @_where_0(%4, %iterArg, %13) : (tensor<5xi1>, tensor<5xi32>, tensor<5xi32>) -> tensor<5xi32>
      %c_8 = stablehlo.constant dense<1> : tensor<i32>
      %15 = stablehlo.broadcast_in_dim %c_8, dims = [] : (tensor<i32>) -> tensor<5xi32>
      %16 = stablehlo.compare NE, %14, %15, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
      %17 = stablehlo.convert %16 : (tensor<5xi1>) -> tensor<5xi32>
      %18 = stablehlo.add %iterArg_1, %17 : tensor<5xi32>
      stablehlo.return %14, %18 : tensor<5xi32>, tensor<5xi32>
    }
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %2:4 = stablehlo.while(%iterArg = %arg1, %iterArg_1 = %arg1, %iterArg_2 = %arg1, %iterArg_3 = %c_0) : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i32>
    cond {
      %3 = stablehlo.multiply %iterArg_2, %iterArg_2 : tensor<4xf32>
      %4 = stablehlo.subtract %3, %iterArg : tensor<4xf32>
      %5 = stablehlo.abs %4 : tensor<4xf32>
      %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
      %6 = stablehlo.reduce(%5 init: %cst) applies stablehlo.maximum across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
      %cst_4 = stablehlo.constant dense<9.99999974E-5> : tensor<f32>
      %7 = stablehlo.compare GT, %6, %cst_4, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %c_5 = stablehlo.constant dense<50> : tensor<i32>
      %8 = stablehlo.compare LT, %iterArg_3, %c_5, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %c_6 = stablehlo.constant dense<false> : tensor<i1>
      %9 = stablehlo.broadcast_in_dim %c_6, dims = [] : (tensor<i1>) -> tensor<i1>
      %10 = stablehlo.compare NE, %8, %9, UNSIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %11 = stablehlo.convert %10 : tensor<i1>
      %12 = stablehlo.and %7, %11 : tensor<i1>
      stablehlo.return %12 : tensor<i1>
    } do {
      %3 = stablehlo.divide %iterArg_1, %iterArg_2 : tensor<4xf32>
      %4 = stablehlo.add %iterArg_2, %3 : tensor<4xf32>
      %cst = stablehlo.constant dense<5.000000e-01> : tensor<f32>
      %5 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4xf32>
      %6 = stablehlo.multiply %5, %4 : tensor<4xf32>
      %c_4 = stablehlo.constant dense<1> : tensor<i32>
      %7 = stablehlo.add %iterArg_3, %c_4 : tensor<i32>
      stablehlo.return %iterArg, %iterArg_1, %6, %7 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i32>
    }
    return %1#0, %1#1, %2#2, %2#3 : tensor<5xi32>, tensor<5xi32>, tensor<4xf32>, tensor<i32>
  }
  func.func private @remainder(%arg0: tensor<5xi32>, %arg1: tensor<i32>) -> tensor<5xi32> {
    %0 = stablehlo.convert %arg1 : tensor<i32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.compare EQ, %0, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %2 = call @_where(%1, %c_0, %0) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %4 = stablehlo.remainder %arg0, %3 : tensor<5xi32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %5 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %6 = stablehlo.compare NE, %4, %5, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %7 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %8 = stablehlo.compare LT, %4, %7, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %9 = stablehlo.compare LT, %2, %c_3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %10 = stablehlo.broadcast_in_dim %9, dims = [] : (tensor<i1>) -> tensor<5xi1>
    %11 = stablehlo.compare NE, %8, %10, UNSIGNED : (tensor<5xi1>, tensor<5xi1>) -> tensor<5xi1>
    %12 = stablehlo.and %11, %6 : tensor<5xi1>
    %13 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %14 = stablehlo.add %4, %13 : tensor<5xi32>
    %15 = stablehlo.select %12, %14, %4 : tensor<5xi1>, tensor<5xi32>
    return %15 : tensor<5xi32>
  }
  func.func private @_where(%arg0: tensor<i1>, %arg1: tensor<i32>, %arg2: tensor<i32>) -> tensor<i32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<i1>, tensor<i32>
    return %0 : tensor<i32>
  }
  func.func private @floor_divide(%arg0: tensor<5xi32>, %arg1: tensor<i32>) -> tensor<5xi32> {
    %0 = stablehlo.convert %arg1 : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %2 = stablehlo.divide %arg0, %1 : tensor<5xi32>
    %3 = stablehlo.sign %arg0 : tensor<5xi32>
    %4 = stablehlo.sign %0 : tensor<i32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %6 = stablehlo.compare NE, %3, %5, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %7 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %8 = stablehlo.remainder %arg0, %7 : tensor<5xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %9 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %10 = stablehlo.compare NE, %8, %9, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %11 = stablehlo.and %6, %10 : tensor<5xi1>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %12 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %13 = stablehlo.subtract %2, %12 : tensor<5xi32>
    %14 = call @_where_0(%11, %13, %2) : (tensor<5xi1>, tensor<5xi32>, tensor<5xi32>) -> tensor<5xi32>
    return %14 : tensor<5xi32>
  }
  func.func private @_where_0(%arg0: tensor<5xi1>, %arg1: tensor<5xi32>, %arg2: tensor<5xi32>) -> tensor<5xi32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<5xi1>, tensor<5xi32>
    return %0 : tensor<5xi32>
  }
}
