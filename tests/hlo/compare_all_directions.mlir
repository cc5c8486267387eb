module @jit_compare_all_directions attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<10xf32>, %arg1: tensor<10xf32>, %arg2: tensor<10xi32>, %arg3: tensor<10xi32>, %arg4: tensor<10xui32>, %arg5: tensor<10xui32>) -> (tensor<10xi1> {jax.result_info = "result[0]"}, tensor<10xi1> {jax.result_info = "result[1]"}, tensor<10xi1> {jax.result_info = "result[2]"}, tensor<10xi1> {jax.result_info = "result[3]"}, tensor<10xi1> {jax.result_info = "result[4]"}, tensor<10xi1> {jax.result_info = "result[5]"}, tensor<10xi1> {jax.result_info = "result[6]"}, tensor<10xi1> {jax.result_info = "result[7]"}, tensor<10xi1> {jax.result_info = "result[8]"}, tensor<10xi1> {jax.result_info = "result[9]"}, tensor<10xi1> {jax.result_info = "result[10]"}, tensor<10xi1> {jax.result_info = "result[11]"}, tensor<10xi1> {jax.result_info = "result[12]"}, tensor<10xi1> {jax.result_info = "result[13]"}, tensor<10xi1> {jax.result_info = "result[14]"}, tensor<10xi1> {jax.result_info = "result[15]"}, tensor<10xi1> {jax.result_info = "result[16]"}, tensor<10xi1> {jax.result_info = "result[17]"}, tensor<10xi32> {jax.result_info = "result[18]"}, tensor<10xi1> {jax.result_info = "result[19]"}, tensor<10xi1> {jax.result_info = "result[20]"}) {
    %0 = stablehlo.compare EQ, %arg0, %arg1, FLOAT : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xi1>
    %1 = stablehlo.compare NE, %arg0, %arg1, FLOAT : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xi1>
    %2 = stablehlo.compare LT, %arg0, %arg1, FLOAT : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xi1>
    %3 = stablehlo.compare LE, %arg0, %arg1, FLOAT : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xi1>
    %4 = stablehlo.compare GT, %arg0, %arg1, FLOAT : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xi1>
    %5 = stablehlo.compare GE, %arg0, %arg1, FLOAT : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xi1>
    %6 = stablehlo.compare EQ, %arg2, %arg3, SIGNED : (tensor<10xi32>, tensor<10xi32>) -> tensor<10xi1>
    %7 = stablehlo.compare NE, %arg2, %arg3, SIGNED : (tensor<10xi32>, tensor<10xi32>) -> tensor<10xi1>
    %8 = stablehlo.compare LT, %arg2, %arg3, SIGNED : (tensor<10xi32>, tensor<10xi32>) -> tensor<10xi1>
    %9 = stablehlo.compare LE, %arg2, %arg3, SIGNED : (tensor<10xi32>, tensor<10xi32>) -> tensor<10xi1>
    %10 = stablehlo.compare GT, %arg2, %arg3, SIGNED : (tensor<10xi32>, tensor<10xi32>) -> tensor<10xi1>
    %11 = stablehlo.compare GE, %arg2, %arg3, SIGNED : (tensor<10xi32>, tensor<10xi32>) -> tensor<10xi1>
    %12 = stablehlo.compare EQ, %arg4, %arg5, UNSIGNED : (tensor<10xui32>, tensor<10xui32>) -> tensor<10xi1>
    %13 = stablehlo.compare NE, %arg4, %arg5, UNSIGNED : (tensor<10xui32>, tensor<10xui32>) -> tensor<10xi1>
    %14 = stablehlo.compare LT, %arg4, %arg5, UNSIGNED : (tensor<10xui32>, tensor<10xui32>) -> tensor<10xi1>
    %15 = stablehlo.compare LE, %arg4, %arg5, UNSIGNED : (tensor<10xui32>, tensor<10xui32>) -> tensor<10xi1>
    %16 = stablehlo.compare GT, %arg4, %arg5, UNSIGNED : (tensor<10xui32>, tensor<10xui32>) -> tensor<10xi1>
    %17 = stablehlo.compare GE, %arg4, %arg5, UNSIGNED : (tensor<10xui32>, tensor<10xui32>) -> tensor<10xi1>
    %18 = stablehlo.compare LT, %arg0, %arg1, FLOAT : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xi1>
    %19 = call @_where(%18, %arg2, %arg3) : (tensor<10xi1>, tensor<10xi32>, tensor<10xi32>) -> tensor<10xi32>
    %20 = stablehlo.compare LT, %arg0, %arg1, FLOAT : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xi1>
    %21 = stablehlo.not %20 : tensor<10xi1>
    %22 = stablehlo.compare LT, %arg0, %arg1, FLOAT : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xi1>
    %23 = stablehlo.compare LT, %arg2, %arg3, SIGNED : (tensor<10xi32>, tensor<10xi32>) -> tensor<10xi1>
    %24 = stablehlo.and %22, %23 : tensor<10xi1>
    %25 = stablehlo.compare EQ, %arg4, %arg5, UNSIGNED : (tensor<10xui32>, tensor<10xui32>) -> tensor<10xi1>
    %26 = stablehlo.compare NE, %arg0, %arg0, FLOAT : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xi1>
    %27 = stablehlo.xor %25, %26 : tensor<10xi1>
    %28 = stablehlo.or %24, %27 : tensor<10xi1>
    return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %19, %21, %28 : tensor<10xi1>, tensor<10xi1>, tensor<10xi1>, tensor<10xi1>, tensor<10xi1>, tensor<10xi1>, tensor<10xi1>, tensor<10xi1>, tensor<10xi1>, tensor<10xi1>, tensor<10xi1>, tensor<10xi1>, tensor<10xi1>, tensor<10xi1>, tensor<10xi1>, tensor<10xi1>, tensor<10xi1>, tensor<10xi1>, tensor<10xi32>, tensor<10xi1>, tensor<10xi1>
  }
  func.func private @_where(%arg0: tensor<10xi1>, %arg1: tensor<10xi32>, %arg2: tensor<10xi32>) -> tensor<10xi32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<10xi1>, tensor<10xi32>
    return %0 : tensor<10xi32>
  }
}
