module @jit_complex_arith attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x4xcomplex<f32>>, %arg1: tensor<3x4xcomplex<f32>>, %arg2: tensor<3x4xf32>) -> (tensor<3x4xcomplex<f32>> {jax.result_info = "result[0]"}, tensor<3x4xcomplex<f32>> {jax.result_info = "result[1]"}, tensor<3x4xcomplex<f32>> {jax.result_info = "result[2]"}, tensor<3x4xcomplex<f32>> {jax.result_info = "result[3]"}, tensor<3x4xf32> {jax.result_info = "result[4]"}, tensor<3x4xf32> {jax.result_info = "result[5]"}, tensor<3x4xcomplex<f32>> {jax.result_info = "result[6]"}, tensor<3x4xf32> {jax.result_info = "result[7]"}, tensor<3x4xf32> {jax.result_info = "result[8]"}, tensor<3xcomplex<f32>> {jax.result_info = "result[9]"}, tensor<3x3xcomplex<f32>> {jax.result_info = "result[10]"}, tensor<3x4xi1> {jax.result_info = "result[11]"}, tensor<3x4xcomplex<f32>> {jax.result_info = "result[12]"}, tensor<3x4xcomplex<f32>> {jax.result_info = "result[13]"}, tensor<3x4xcomplex<f32>> {jax.result_info = "result[14]"}, tensor<3x4xcomplex<f32>> {jax.result_info = "result[15]"}) {
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3x4xf32>
    %1 = stablehlo.multiply %arg2, %0 : tensor<3x4xf32>
    %2 = stablehlo.complex %arg2, %1 : tensor<3x4xcomplex<f32>>
    %3 = stablehlo.multiply %arg0, %arg1 : tensor<3x4xcomplex<f32>>
    %4 = stablehlo.divide %arg0, %arg1 : tensor<3x4xcomplex<f32>>
    %5 = stablehlo.subtract %3, %4 : tensor<3x4xcomplex<f32>>
    %6 = stablehlo.exponential %arg0 : tensor<3x4xcomplex<f32>>
    %7 = stablehlo.log %arg1 : tensor<3x4xcomplex<f32>>
    %8 = stablehlo.sqrt %arg0 : tensor<3x4xcomplex<f32>>
    %9 = stablehlo.abs %arg0 : (tensor<3x4xcomplex<f32>>) -> tensor<3x4xf32>
    %10 = call @angle(%arg1) : (tensor<3x4xcomplex<f32>>) -> tensor<3x4xf32>
    %11 = stablehlo.real %arg0 : (tensor<3x4xcomplex<f32>>) -> tensor<3x4xf32>
    %12 = stablehlo.imag %arg0 : (tensor<3x4xcomplex<f32>>) -> tensor<3x4xf32>
    %13 = stablehlo.negate %12 : tensor<3x4xf32>
    %14 = stablehlo.complex %11, %13 : tensor<3x4xcomplex<f32>>
    %15 = stablehlo.multiply %14, %2 : tensor<3x4xcomplex<f32>>
    %16 = stablehlo.multiply %arg0, %arg1 : tensor<3x4xcomplex<f32>>
    %17 = stablehlo.real %16 : (tensor<3x4xcomplex<f32>>) -> tensor<3x4xf32>
    %18 = stablehlo.imag %arg0 : (tensor<3x4xcomplex<f32>>) -> tensor<3x4xf32>
    %19 = stablehlo.multiply %arg0, %arg1 : tensor<3x4xcomplex<f32>>
    %cst_0 = stablehlo.constant dense<(0.000000e+00,0.000000e+00)> : tensor<complex<f32>>
    %20 = stablehlo.reduce(%19 init: %cst_0) applies stablehlo.add across dimensions = [1] : (tensor<3x4xcomplex<f32>>, tensor<complex<f32>>) -> tensor<3xcomplex<f32>>
    %21 = stablehlo.transpose %arg1, dims = [1, 0] : (tensor<3x4xcomplex<f32>>) -> tensor<4x3xcomplex<f32>>
    %22 = stablehlo.dot_general %arg0, %21, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<3x4xcomplex<f32>>, tensor<4x3xcomplex<f32>>) -> tensor<3x3xcomplex<f32>>
    %23 = stablehlo.compare EQ, %arg0, %arg1, FLOAT : (tensor<3x4xcomplex<f32>>, tensor<3x4xcomplex<f32>>) -> tensor<3x4xi1>
    %24 = stablehlo.compare NE, %arg0, %2, FLOAT : (tensor<3x4xcomplex<f32>>, tensor<3x4xcomplex<f32>>) -> tensor<3x4xi1>
    %25 = stablehlo.or %23, %24 : tensor<3x4xi1>
    %26 = stablehlo.tanh %arg0 : tensor<3x4xcomplex<f32>>
    %27 = stablehlo.real %arg1 : (tensor<3x4xcomplex<f32>>) -> tensor<3x4xf32>
    %28 = stablehlo.imag %arg1 : (tensor<3x4xcomplex<f32>>) -> tensor<3x4xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %29 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<3x4xf32>
    %30 = stablehlo.compare EQ, %27, %29, FLOAT : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xi1>
    %31 = stablehlo.sine %27 : tensor<3x4xf32>
    %32 = stablehlo.cosine %27 : tensor<3x4xf32>
    %33 = stablehlo.exponential_minus_one %28 : tensor<3x4xf32>
    %34 = stablehlo.negate %28 : tensor<3x4xf32>
    %35 = stablehlo.exponential_minus_one %34 : tensor<3x4xf32>
    %36 = stablehlo.subtract %33, %35 : tensor<3x4xf32>
    %cst_2 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %37 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<3x4xf32>
    %38 = stablehlo.divide %36, %37 : tensor<3x4xf32>
    %39 = stablehlo.add %33, %35 : tensor<3x4xf32>
    %cst_3 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %40 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<3x4xf32>
    %41 = stablehlo.add %39, %40 : tensor<3x4xf32>
    %cst_4 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %42 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<3x4xf32>
    %43 = stablehlo.divide %41, %42 : tensor<3x4xf32>
    %44 = stablehlo.multiply %31, %43 : tensor<3x4xf32>
    %45 = stablehlo.multiply %32, %38 : tensor<3x4xf32>
    %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %46 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<3x4xf32>
    %47 = stablehlo.complex %46, %45 : tensor<3x4xcomplex<f32>>
    %48 = stablehlo.complex %44, %45 : tensor<3x4xcomplex<f32>>
    %49 = stablehlo.select %30, %47, %48 : tensor<3x4xi1>, tensor<3x4xcomplex<f32>>
    %50 = stablehlo.power %arg0, %arg1 : tensor<3x4xcomplex<f32>>
    %51 = stablehlo.abs %arg0 : (tensor<3x4xcomplex<f32>>) -> tensor<3x4xf32>
    %cst_6 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %52 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<3x4xf32>
    %53 = stablehlo.compare GT, %51, %52, FLOAT : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xi1>
    %54 = call @_where(%53, %arg0, %arg1) : (tensor<3x4xi1>, tensor<3x4xcomplex<f32>>, tensor<3x4xcomplex<f32>>) -> tensor<3x4xcomplex<f32>>
    return %5, %6, %7, %8, %9, %10, %15, %17, %18, %20, %22, %25, %26, %49, %50, %54 : tensor<3x4xcomplex<f32>>, tensor<3x4xcomplex<f32>>, tensor<3x4xcomplex<f32>>, tensor<3x4xcomplex<f32>>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xcomplex<f32>>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3xcomplex<f32>>, tensor<3x3xcomplex<f32>>, tensor<3x4xi1>, tensor<3x4xcomplex<f32>>, tensor<3x4xcomplex<f32>>, tensor<3x4xcomplex<f32>>, tensor<3x4xcomplex<f32>>
  }
  func.func private @angle(%arg0: tensor<3x4xcomplex<f32>>) -> tensor<3x4xf32> {
    %0 = stablehlo.real %arg0 : (tensor<3x4xcomplex<f32>>) -> tensor<3x4xf32>
    %1 = stablehlo.imag %arg0 : (tensor<3x4xcomplex<f32>>) -> tensor<3x4xf32>
    %2 = stablehlo.atan2 %1, %0 : tensor<3x4xf32>
    return %2 : tensor<3x4xf32>
  }
  func.func private @_where(%arg0: tensor<3x4xi1>, %arg1: tensor<3x4xcomplex<f32>>, %arg2: tensor<3x4xcomplex<f32>>) -> tensor<3x4xcomplex<f32>> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<3x4xi1>, tensor<3x4xcomplex<f32>>
    return %0 : tensor<3x4xcomplex<f32>>
  }
}
