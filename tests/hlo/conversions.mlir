module @jit_conversions attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<24xf32>, %arg1: tensor<24xf32>, %arg2: tensor<24xi32>, %arg3: tensor<8xui32>, %arg4: tensor<8xi8>) -> (tensor<24xi32> {jax.result_info = "result[0]"}, tensor<24xui8> {jax.result_info = "result[1]"}, tensor<24xi8> {jax.result_info = "result[2]"}, tensor<24xbf16> {jax.result_info = "result[3]"}, tensor<24xf16> {jax.result_info = "result[4]"}, tensor<24xi1> {jax.result_info = "result[5]"}, tensor<24xf32> {jax.result_info = "result[6]"}, tensor<24xf32> {jax.result_info = "result[7]"}, tensor<24xf32> {jax.result_info = "result[8]"}, tensor<24xui8> {jax.result_info = "result[9]"}, tensor<24xi8> {jax.result_info = "result[10]"}, tensor<24xi32> {jax.result_info = "result[11]"}, tensor<8xi32> {jax.result_info = "result[12]"}, tensor<8xf32> {jax.result_info = "result[13]"}, tensor<8xi32> {jax.result_info = "result[14]"}, tensor<8xui32> {jax.result_info = "result[15]"}, tensor<8xf32> {jax.result_info = "result[16]"}, tensor<24xf32> {jax.result_info = "result[17]"}, tensor<24xbf16> {jax.result_info = "result[18]"}, tensor<24xui32> {jax.result_info = "result[19]"}) {
    %0 = stablehlo.convert %arg1 : (tensor<24xf32>) -> tensor<24xi32>
    %cst = stablehlo.constant dense<1.000000e+01> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<24xf32>
    %2 = stablehlo.multiply %arg1, %1 : tensor<24xf32>
    %3 = stablehlo.abs %2 : tensor<24xf32>
    %4 = stablehlo.convert %3 : (tensor<24xf32>) -> tensor<24xui8>
    %5 = stablehlo.convert %arg1 : (tensor<24xf32>) -> tensor<24xi8>
    %6 = stablehlo.convert %arg0 : (tensor<24xf32>) -> tensor<24xbf16>
    %cst_0 = stablehlo.constant dense<1.000000e+03> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<24xf32>
    %8 = stablehlo.multiply %arg0, %7 : tensor<24xf32>
    %9 = stablehlo.convert %8 : (tensor<24xf32>) -> tensor<24xf16>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %10 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<24xf32>
    %11 = stablehlo.compare NE, %arg0, %10, FLOAT : (tensor<24xf32>, tensor<24xf32>) -> tensor<24xi1>
    %12 = stablehlo.convert %11 : tensor<24xi1>
    %13 = stablehlo.convert %arg0 : (tensor<24xf32>) -> tensor<24xbf16>
    %14 = stablehlo.convert %13 : (tensor<24xbf16>) -> tensor<24xf32>
    %15 = stablehlo.convert %arg0 : (tensor<24xf32>) -> tensor<24xf16>
    %16 = stablehlo.convert %15 : (tensor<24xf16>) -> tensor<24xf32>
    %17 = stablehlo.convert %arg2 : (tensor<24xi32>) -> tensor<24xf32>
    %18 = stablehlo.convert %arg2 : (tensor<24xi32>) -> tensor<24xui8>
    %19 = stablehlo.convert %arg2 : (tensor<24xi32>) -> tensor<24xi8>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %20 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<24xi32>
    %21 = stablehlo.compare NE, %arg2, %20, SIGNED : (tensor<24xi32>, tensor<24xi32>) -> tensor<24xi1>
    %22 = stablehlo.convert %21 : tensor<24xi1>
    %23 = stablehlo.convert %22 : (tensor<24xi1>) -> tensor<24xi32>
    %24 = stablehlo.convert %arg3 : (tensor<8xui32>) -> tensor<8xi32>
    %25 = stablehlo.convert %arg3 : (tensor<8xui32>) -> tensor<8xf32>
    %26 = stablehlo.convert %arg4 : (tensor<8xi8>) -> tensor<8xi32>
    %27 = stablehlo.convert %arg4 : (tensor<8xi8>) -> tensor<8xui32>
    %28 = stablehlo.convert %arg4 : (tensor<8xi8>) -> tensor<8xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %29 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<24xf32>
    %30 = stablehlo.compare GT, %arg0, %29, FLOAT : (tensor<24xf32>, tensor<24xf32>) -> tensor<24xi1>
    %31 = stablehlo.convert %30 : (tensor<24xi1>) -> tensor<24xf32>
    %32 = stablehlo.convert %arg2 : (tensor<24xi32>) -> tensor<24xbf16>
    %cst_3 = stablehlo.constant dense<1.000000e+06> : tensor<f32>
    %33 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<24xf32>
    %34 = stablehlo.multiply %arg1, %33 : tensor<24xf32>
    %35 = stablehlo.abs %34 : tensor<24xf32>
    %36 = stablehlo.convert %35 : (tensor<24xf32>) -> tensor<24xui32>
    return %0, %4, %5, %6, %9, %12, %14, %16, %17, %18, %19, %23, %24, %25, %26, %27, %28, %31, %32, %36 : tensor<24xi32>, tensor<24xui8>, tensor<24xi8>, tensor<24xbf16>, tensor<24xf16>, tensor<24xi1>, tensor<24xf32>, tensor<24xf32>, tensor<24xf32>, tensor<24xui8>, tensor<24xi8>, tensor<24xi32>, tensor<8xi32>, tensor<8xf32>, tensor<8xi32>, tensor<8xui32>, tensor<8xf32>, tensor<24xf32>, tensor<24xbf16>, tensor<24xui32>
  }
}
