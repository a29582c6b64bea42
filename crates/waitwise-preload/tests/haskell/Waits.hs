-- GHC's threaded runtime under the interposer: its OS threads (tasks)
-- sleep on pthread condition variables when they wait for a capability,
-- when a bound thread's MVar is filled by another OS thread, when a safe
-- foreign call returns, and when the garbage collector stops and starts
-- the capabilities (rts/posix/OSThreads.c). Built with -threaded and run
-- on 4 capabilities. Checks its own results; prints "done" last.
{-# LANGUAGE ForeignFunctionInterface #-}
module Main (main) where

import Control.Concurrent
import Control.Concurrent.STM
import Control.Exception (evaluate)
import Control.Monad
import Data.IORef
import Data.List (foldl')
import Foreign.C.Types (CInt (..), CUInt (..))
import GHC.Clock (getMonotonicTime)
import System.Exit (exitFailure)
import System.Timeout (timeout)

-- A safe call: the calling OS thread gives its capability up for the
-- call and must take one back after it.
foreign import ccall safe "usleep" c_usleep :: CUInt -> IO CInt

expect :: Bool -> String -> IO ()
expect ok what = unless ok $ putStrLn ("FAILED: " ++ what) >> exitFailure

-- Forks a thread and returns an MVar filled when it ends.
forkJoin :: (IO () -> IO ThreadId) -> IO () -> IO (MVar ())
forkJoin fork act = do
  done <- newEmptyMVar
  _ <- fork (act >> putMVar done ())
  return done

main :: IO ()
main = do
  -- Ping-pong between two bound threads: every hand-off wakes another
  -- OS thread through its condition variable.
  ping <- newEmptyMVar
  pong <- newEmptyMVar
  let rounds = 20000 :: Int
  ponger <- forkJoin forkOS $ replicateM_ rounds (takeMVar ping >>= putMVar pong . (+ 1))
  total <- foldM (\acc i -> putMVar ping i >> takeMVar pong >>= \r -> return (acc + r)) 0 [1 .. rounds]
  takeMVar ponger
  expect (total == sum [2 .. rounds + 1]) ("ping-pong total " ++ show total)

  -- 4 producers to one consumer through a Chan, across capabilities.
  chan <- newChan
  let perProducer = 20000 :: Int
  producers <- forM [0 .. 3] $ \p ->
    forkJoin (forkOn p) $ forM_ [1 .. perProducer] $ \i -> writeChan chan (p * 1000000 + i)
  got <- foldM (\acc _ -> (+ acc) <$> readChan chan) 0 [1 .. 4 * perProducer]
  mapM_ takeMVar producers
  let want = sum [p * 1000000 * perProducer + perProducer * (perProducer + 1) `div` 2 | p <- [0 .. 3]]
  expect (got == want) ("chan sum " ++ show got ++ ", expected " ++ show want)

  -- STM transfers among 10 accounts from 8 threads, some waiting with
  -- retry for money to arrive; the total is conserved.
  accounts <- mapM newTVarIO (replicate 10 (1000 :: Int))
  transfers <- forM [0 .. 7] $ \t -> forkJoin forkIO $ forM_ [1 .. 5000 :: Int] $ \i -> do
    let from = accounts !! ((t + i) `mod` 10)
        to = accounts !! ((t * 3 + i * 7) `mod` 10)
    atomically $ do
      balance <- readTVar from
      when (balance < 5) retry
      writeTVar from (balance - 5)
      modifyTVar' to (+ 5)
  mapM_ takeMVar transfers
  balances <- mapM readTVarIO accounts
  expect (sum balances == 10000) ("STM total " ++ show (sum balances))

  -- Bound threads making safe foreign calls: each return takes a
  -- capability back, waiting for it while the others run.
  sleepers <- forM [1 .. 6 :: Int] $ \_ -> forkJoin forkOS $ replicateM_ 200 (c_usleep 100)
  mapM_ takeMVar sleepers

  -- Allocating threads on every capability: each collection stops and
  -- restarts them all.
  answers <- newIORef (0 :: Int)
  workers <- forM [0 .. 3] $ \c -> forkJoin (forkOn c) $ do
    s <- evaluate (foldl' (+) 0 (map (* (c + 1)) [1 .. 300000 :: Int]))
    atomicModifyIORef' answers (\a -> (a + s, ()))
  mapM_ takeMVar workers
  answer <- readIORef answers
  expect (answer == 10 * (300000 * 300001 `div` 2)) ("workers' sum " ++ show answer)

  -- Timed waits: a timeout on an MVar nobody fills, and threadDelay,
  -- neither ending early.
  never <- newEmptyMVar :: IO (MVar ())
  t0 <- getMonotonicTime
  r <- timeout 100000 (takeMVar never)
  t1 <- getMonotonicTime
  expect (r == Nothing) "timeout on an empty MVar returned a value"
  expect (t1 - t0 >= 0.099) ("timeout returned after " ++ show (t1 - t0) ++ " s")
  threadDelay 50000
  t2 <- getMonotonicTime
  expect (t2 - t1 >= 0.049) ("threadDelay 50 ms returned after " ++ show (t2 - t1) ++ " s")

  putStrLn "done"
