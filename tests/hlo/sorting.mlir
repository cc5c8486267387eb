module @jit_sorting attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<16xf32>, %arg1: tensor<4x5xi32>, %arg2: tensor<7xi32>, %arg3: tensor<7xf32>, %arg4: tensor<7xi32>) -> (tensor<16xf32> {jax.result_info = "result[0]"}, tensor<16xi32> {jax.result_info = "result[1]"}, tensor<4x5xi32> {jax.result_info = "result[2]"}, tensor<4x5xi32> {jax.result_info = "result[3]"}, tensor<4xi32> {jax.result_info = "result[4]"}, tensor<7xi32> {jax.result_info = "result[5]"}, tensor<7xf32> {jax.result_info = "result[6]"}, tensor<7xi32> {jax.result_info = "result[7]"}, tensor<7xi32> {jax.result_info = "result[8]"}, tensor<7xf32> {jax.result_info = "result[9]"}) {
    %0 = call @sort(%arg0) : (tensor<16xf32>) -> tensor<16xf32>
    %1 = call @argsort(%arg0) : (tensor<16xf32>) -> tensor<16xi32>
    %2 = call @sort_0(%arg1) : (tensor<4x5xi32>) -> tensor<4x5xi32>
    %3 = call @sort_1(%arg1) : (tensor<4x5xi32>) -> tensor<4x5xi32>
    %4 = stablehlo.slice %arg1 [0:4, 0:1] : (tensor<4x5xi32>) -> tensor<4x1xi32>
    %5 = stablehlo.reshape %4 : (tensor<4x1xi32>) -> tensor<4xi32>
    %6 = call @argsort_2(%5) : (tensor<4xi32>) -> tensor<4xi32>
    %7:3 = "stablehlo.sort"(%arg2, %arg3, %arg4) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg5: tensor<i32>, %arg6: tensor<i32>, %arg7: tensor<f32>, %arg8: tensor<f32>, %arg9: tensor<i32>, %arg10: tensor<i32>):
      %9 = stablehlo.compare LT, %arg5, %arg6, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %9 : tensor<i1>
    }) : (tensor<7xi32>, tensor<7xf32>, tensor<7xi32>) -> (tensor<7xi32>, tensor<7xf32>, tensor<7xi32>)
    %8:2 = "stablehlo.sort"(%arg2, %arg3) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg5: tensor<i32>, %arg6: tensor<i32>, %arg7: tensor<f32>, %arg8: tensor<f32>):
      %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %9 = stablehlo.compare EQ, %arg7, %cst, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %10 = stablehlo.select %9, %cst_0, %arg7 : tensor<i1>, tensor<f32>
      %11 = stablehlo.compare NE, %arg7, %arg7, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_1 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %12 = stablehlo.select %11, %cst_1, %10 : tensor<i1>, tensor<f32>
      %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %13 = stablehlo.compare EQ, %arg8, %cst_2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %14 = stablehlo.select %13, %cst_3, %arg8 : tensor<i1>, tensor<f32>
      %15 = stablehlo.compare NE, %arg8, %arg8, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_4 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %16 = stablehlo.select %15, %cst_4, %14 : tensor<i1>, tensor<f32>
      %17 = stablehlo.compare LT, %12, %16, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %18 = stablehlo.compare LT, %arg5, %arg6, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %19 = stablehlo.compare EQ, %arg5, %arg6, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %20 = stablehlo.and %19, %17 : tensor<i1>
      %21 = stablehlo.or %18, %20 : tensor<i1>
      stablehlo.return %21 : tensor<i1>
    }) : (tensor<7xi32>, tensor<7xf32>) -> (tensor<7xi32>, tensor<7xf32>)
    return %0, %1, %2, %3, %6, %7#0, %7#1, %7#2, %8#0, %8#1 : tensor<16xf32>, tensor<16xi32>, tensor<4x5xi32>, tensor<4x5xi32>, tensor<4xi32>, tensor<7xi32>, tensor<7xf32>, tensor<7xi32>, tensor<7xi32>, tensor<7xf32>
  }
  func.func private @sort(%arg0: tensor<16xf32>) -> tensor<16xf32> {
    %0 = "stablehlo.sort"(%arg0) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %1 = stablehlo.compare EQ, %arg1, %cst, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %2 = stablehlo.select %1, %cst_0, %arg1 : tensor<i1>, tensor<f32>
      %3 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_1 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %4 = stablehlo.select %3, %cst_1, %2 : tensor<i1>, tensor<f32>
      %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %5 = stablehlo.compare EQ, %arg2, %cst_2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %6 = stablehlo.select %5, %cst_3, %arg2 : tensor<i1>, tensor<f32>
      %7 = stablehlo.compare NE, %arg2, %arg2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_4 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %8 = stablehlo.select %7, %cst_4, %6 : tensor<i1>, tensor<f32>
      %9 = stablehlo.compare LT, %4, %8, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %9 : tensor<i1>
    }) : (tensor<16xf32>) -> tensor<16xf32>
    return %0 : tensor<16xf32>
  }
  func.func private @argsort(%arg0: tensor<16xf32>) -> tensor<16xi32> {
    %0 = stablehlo.iota dim = 0 : tensor<16xi32>
    %1:2 = "stablehlo.sort"(%arg0, %0) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>, %arg3: tensor<i32>, %arg4: tensor<i32>):
      %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %2 = stablehlo.compare EQ, %arg1, %cst, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %3 = stablehlo.select %2, %cst_0, %arg1 : tensor<i1>, tensor<f32>
      %4 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_1 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %5 = stablehlo.select %4, %cst_1, %3 : tensor<i1>, tensor<f32>
      %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %6 = stablehlo.compare EQ, %arg2, %cst_2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %7 = stablehlo.select %6, %cst_3, %arg2 : tensor<i1>, tensor<f32>
      %8 = stablehlo.compare NE, %arg2, %arg2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_4 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %9 = stablehlo.select %8, %cst_4, %7 : tensor<i1>, tensor<f32>
      %10 = stablehlo.compare LT, %5, %9, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %10 : tensor<i1>
    }) : (tensor<16xf32>, tensor<16xi32>) -> (tensor<16xf32>, tensor<16xi32>)
    return %1#1 : tensor<16xi32>
  }
  func.func private @sort_0(%arg0: tensor<4x5xi32>) -> tensor<4x5xi32> {
    %0 = "stablehlo.sort"(%arg0) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<i32>, %arg2: tensor<i32>):
      %1 = stablehlo.compare LT, %arg1, %arg2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %1 : tensor<i1>
    }) : (tensor<4x5xi32>) -> tensor<4x5xi32>
    return %0 : tensor<4x5xi32>
  }
  func.func private @sort_1(%arg0: tensor<4x5xi32>) -> tensor<4x5xi32> {
    %0 = "stablehlo.sort"(%arg0) <{dimension = 1 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<i32>, %arg2: tensor<i32>):
      %2 = stablehlo.compare LT, %arg1, %arg2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %2 : tensor<i1>
    }) : (tensor<4x5xi32>) -> tensor<4x5xi32>
    %1 = stablehlo.reverse %0, dims = [1] : tensor<4x5xi32>
    return %1 : tensor<4x5xi32>
  }
  func.func private @argsort_2(%arg0: tensor<4xi32>) -> tensor<4xi32> {
    %0 = stablehlo.iota dim = 0 : tensor<4xi32>
    %1:2 = "stablehlo.sort"(%arg0, %0) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<i32>, %arg2: tensor<i32>, %arg3: tensor<i32>, %arg4: tensor<i32>):
      %2 = stablehlo.compare LT, %arg1, %arg2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %2 : tensor<i1>
    }) : (tensor<4xi32>, tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>)
    return %1#1 : tensor<4xi32>
  }
}
