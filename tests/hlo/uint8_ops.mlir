module @jit_uint8_ops attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<20xui8>, %arg1: tensor<20xui8>, %arg2: tensor<20xui8>) -> (tensor<20xui8> {jax.result_info = "result[0]"}, tensor<20xui8> {jax.result_info = "result[1]"}, tensor<20xui8> {jax.result_info = "result[2]"}, tensor<20xui8> {jax.result_info = "result[3]"}, tensor<20xui8> {jax.result_info = "result[4]"}, tensor<20xui8> {jax.result_info = "result[5]"}, tensor<20xui8> {jax.result_info = "result[6]"}, tensor<20xui8> {jax.result_info = "result[7]"}, tensor<20xui8> {jax.result_info = "result[8]"}, tensor<20xui8> {jax.result_info = "result[9]"}, tensor<20xui8> {jax.result_info = "result[10]"}, tensor<20xui8> {jax.result_info = "result[11]"}, tensor<20xui8> {jax.result_info = "result[12]"}, tensor<20xui8> {jax.result_info = "result[13]"}, tensor<20xui8> {jax.result_info = "result[14]"}, tensor<20xui8> {jax.result_info = "result[15]"}, tensor<20xui8> {jax.result_info = "result[16]"}, tensor<20xui8> {jax.result_info = "result[17]"}, tensor<20xui8> {jax.result_info = "result[18]"}, tensor<20xi1> {jax.result_info = "result[19]"}, tensor<20xf32> {jax.result_info = "result[20]"}) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<20xui8>
    %1 = stablehlo.subtract %arg0, %arg1 : tensor<20xui8>
    %2 = stablehlo.multiply %arg0, %arg1 : tensor<20xui8>
    %3 = stablehlo.divide %arg0, %arg1 : tensor<20xui8>
    %4 = stablehlo.remainder %arg0, %arg1 : tensor<20xui8>
    %5 = call @floor_divide(%arg0, %arg1) : (tensor<20xui8>, tensor<20xui8>) -> tensor<20xui8>
    %6 = call @remainder(%arg0, %arg1) : (tensor<20xui8>, tensor<20xui8>) -> tensor<20xui8>
    %7 = stablehlo.and %arg0, %arg1 : tensor<20xui8>
    %8 = stablehlo.or %arg0, %arg1 : tensor<20xui8>
    %9 = stablehlo.xor %arg0, %arg1 : tensor<20xui8>
    %10 = stablehlo.not %arg0 : tensor<20xui8>
    %11 = stablehlo.shift_left %arg0, %arg2 : tensor<20xui8>
    %12 = stablehlo.shift_right_arithmetic %arg0, %arg2 : tensor<20xui8>
    %13 = stablehlo.shift_right_logical %arg0, %arg2 : tensor<20xui8>
    %14 = stablehlo.popcnt %arg0 : tensor<20xui8>
    %15 = stablehlo.count_leading_zeros %arg0 : tensor<20xui8>
    %16 = stablehlo.maximum %arg0, %arg1 : tensor<20xui8>
    %17 = stablehlo.minimum %arg0, %arg1 : tensor<20xui8>
    %c = stablehlo.constant dense<5> : tensor<ui8>
    %c_0 = stablehlo.constant dense<100> : tensor<ui8>
    %18 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<ui8>) -> tensor<20xui8>
    %19 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<ui8>) -> tensor<20xui8>
    %20 = stablehlo.clamp %18, %arg0, %19 : tensor<20xui8>
    %21 = stablehlo.compare LT, %arg0, %arg1, UNSIGNED : (tensor<20xui8>, tensor<20xui8>) -> tensor<20xi1>
    %22 = stablehlo.convert %arg0 : (tensor<20xui8>) -> tensor<20xf32>
    return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %20, %21, %22 : tensor<20xui8>, tensor<20xui8>, tensor<20xui8>, tensor<20xui8>, tensor<20xui8>, tensor<20xui8>, tensor<20xui8>, tensor<20xui8>, tensor<20xui8>, tensor<20xui8>, tensor<20xui8>, tensor<20xui8>, tensor<20xui8>, tensor<20xui8>, tensor<20xui8>, tensor<20xui8>, tensor<20xui8>, tensor<20xui8>, tensor<20xui8>, tensor<20xi1>, tensor<20xf32>
  }
  func.func private @floor_divide(%arg0: tensor<20xui8>, %arg1: tensor<20xui8>) -> tensor<20xui8> {
    %0 = stablehlo.divide %arg0, %arg1 : tensor<20xui8>
    return %0 : tensor<20xui8>
  }
  func.func private @remainder(%arg0: tensor<20xui8>, %arg1: tensor<20xui8>) -> tensor<20xui8> {
    %c = stablehlo.constant dense<0> : tensor<ui8>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<ui8>) -> tensor<20xui8>
    %1 = stablehlo.compare EQ, %arg1, %0, UNSIGNED : (tensor<20xui8>, tensor<20xui8>) -> tensor<20xi1>
    %c_0 = stablehlo.constant dense<1> : tensor<ui8>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<ui8>) -> tensor<20xui8>
    %3 = call @_where(%1, %2, %arg1) : (tensor<20xi1>, tensor<20xui8>, tensor<20xui8>) -> tensor<20xui8>
    %4 = stablehlo.remainder %arg0, %3 : tensor<20xui8>
    %c_1 = stablehlo.constant dense<0> : tensor<ui8>
    %5 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<ui8>) -> tensor<20xui8>
    %6 = stablehlo.compare NE, %4, %5, UNSIGNED : (tensor<20xui8>, tensor<20xui8>) -> tensor<20xi1>
    %c_2 = stablehlo.constant dense<0> : tensor<ui8>
    %7 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<ui8>) -> tensor<20xui8>
    %8 = stablehlo.compare LT, %4, %7, UNSIGNED : (tensor<20xui8>, tensor<20xui8>) -> tensor<20xi1>
    %c_3 = stablehlo.constant dense<0> : tensor<ui8>
    %9 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<ui8>) -> tensor<20xui8>
    %10 = stablehlo.compare LT, %3, %9, UNSIGNED : (tensor<20xui8>, tensor<20xui8>) -> tensor<20xi1>
    %11 = stablehlo.compare NE, %8, %10, UNSIGNED : (tensor<20xi1>, tensor<20xi1>) -> tensor<20xi1>
    %12 = stablehlo.and %11, %6 : tensor<20xi1>
    %13 = stablehlo.add %4, %3 : tensor<20xui8>
    %14 = stablehlo.select %12, %13, %4 : tensor<20xi1>, tensor<20xui8>
    return %14 : tensor<20xui8>
  }
  func.func private @_where(%arg0: tensor<20xi1>, %arg1: tensor<20xui8>, %arg2: tensor<20xui8>) -> tensor<20xui8> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<20xi1>, tensor<20xui8>
    return %0 : tensor<20xui8>
  }
}
