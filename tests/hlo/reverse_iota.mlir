module @jit_reverse_iota attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x3x4xf32>) -> (tensor<3x3x4xf32> {jax.result_info = "result[0]"}, tensor<3x3x4xf32> {jax.result_info = "result[1]"}, tensor<3x3x4xf32> {jax.result_info = "result[2]"}, tensor<5xi32> {jax.result_info = "result[3]"}, tensor<3x4xf32> {jax.result_info = "result[4]"}, tensor<7xi32> {jax.result_info = "result[5]"}, tensor<3x3x4xf32> {jax.result_info = "result[6]"}, tensor<3x4xf32> {jax.result_info = "result[7]"}, tensor<3x4xf32> {jax.result_info = "result[8]"}) {
    %0 = call @_flip(%arg0) : (tensor<3x3x4xf32>) -> tensor<3x3x4xf32>
    %1 = call @_flip_0(%arg0) : (tensor<3x3x4xf32>) -> tensor<3x3x4xf32>
    %2 = stablehlo.reverse %arg0, dims = [1] : tensor<3x3x4xf32>
    %3 = stablehlo.iota dim = 0 : tensor<5xi32>
    %4 = stablehlo.iota dim = 1 : tensor<3x4xf32>
    %5 = stablehlo.iota dim = 0 : tensor<7xi32>
    %c = stablehlo.constant dense<2> : tensor<i32>
    %6 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<7xi32>
    %7 = stablehlo.multiply %6, %5 : tensor<7xi32>
    %c_0 = stablehlo.constant dense<3> : tensor<i32>
    %8 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<7xi32>
    %9 = stablehlo.add %8, %7 : tensor<7xi32>
    %10 = stablehlo.iota dim = 0 : tensor<4xf32>
    %11 = stablehlo.broadcast_in_dim %10, dims = [2] : (tensor<4xf32>) -> tensor<1x1x4xf32>
    %12 = stablehlo.broadcast_in_dim %11, dims = [0, 1, 2] : (tensor<1x1x4xf32>) -> tensor<3x3x4xf32>
    %13 = stablehlo.add %arg0, %12 : tensor<3x3x4xf32>
    %14 = stablehlo.iota dim = 0 : tensor<3x4xi32>
    %15 = stablehlo.iota dim = 1 : tensor<3x4xi32>
    %c_1 = stablehlo.constant dense<1> : tensor<i32>
    %16 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<3x4xi32>
    %17 = stablehlo.add %14, %16 : tensor<3x4xi32>
    %18 = stablehlo.compare EQ, %17, %15, SIGNED : (tensor<3x4xi32>, tensor<3x4xi32>) -> tensor<3x4xi1>
    %19 = stablehlo.convert %18 : (tensor<3x4xi1>) -> tensor<3x4xf32>
    %20 = stablehlo.slice %arg0 [0:1, 0:3, 0:4] : (tensor<3x3x4xf32>) -> tensor<1x3x4xf32>
    %21 = stablehlo.reshape %20 : (tensor<1x3x4xf32>) -> tensor<3x4xf32>
    %22 = call @tril(%21) : (tensor<3x4xf32>) -> tensor<3x4xf32>
    return %0, %1, %2, %3, %4, %9, %13, %19, %22 : tensor<3x3x4xf32>, tensor<3x3x4xf32>, tensor<3x3x4xf32>, tensor<5xi32>, tensor<3x4xf32>, tensor<7xi32>, tensor<3x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>
  }
  func.func private @_flip(%arg0: tensor<3x3x4xf32>) -> tensor<3x3x4xf32> {
    %0 = stablehlo.reverse %arg0, dims = [0, 2] : tensor<3x3x4xf32>
    return %0 : tensor<3x3x4xf32>
  }
  func.func private @_flip_0(%arg0: tensor<3x3x4xf32>) -> tensor<3x3x4xf32> {
    %0 = stablehlo.reverse %arg0, dims = [0, 1, 2] : tensor<3x3x4xf32>
    return %0 : tensor<3x3x4xf32>
  }
  func.func private @tril(%arg0: tensor<3x4xf32>) -> tensor<3x4xf32> {
    %0 = stablehlo.iota dim = 0 : tensor<3x4xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<3x4xi32>
    %2 = stablehlo.add %0, %1 : tensor<3x4xi32>
    %3 = stablehlo.iota dim = 1 : tensor<3x4xi32>
    %4 = stablehlo.compare GE, %2, %3, SIGNED : (tensor<3x4xi32>, tensor<3x4xi32>) -> tensor<3x4xi1>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3x4xf32>
    %6 = stablehlo.select %4, %arg0, %5 : tensor<3x4xi1>, tensor<3x4xf32>
    return %6 : tensor<3x4xf32>
  }
}
