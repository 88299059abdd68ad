#include "platform/parallel.hpp"

#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace dkp::platform {

namespace {

// Worker threads kept from one parallel_for to the next (a training step calls it once per step):
// their per-thread allocation caches (platform/arma_alloc.hpp) then last across steps, and no
// thread is created per step. One call at a time uses the pool; a call made while it is busy (a
// parallel_for inside a group, or from another thread) runs on fresh threads instead.
class WorkerPool {
 public:
  static WorkerPool& instance() {
    static WorkerPool pool;
    return pool;
  }

  // Runs f(1), ..., f(n - 1) on the workers and f(0) on the caller and returns true when all are
  // done; returns false at once when the pool is busy. f must not throw.
  bool try_run(size_t n, const std::function<void(size_t)>& f) {
    std::unique_lock<std::mutex> serial(run_mutex_, std::try_to_lock);
    if (!serial.owns_lock()) return false;
    std::unique_lock<std::mutex> lock(mutex_);
    while (threads_.size() + 1 < n) {
      const size_t index = threads_.size() + 1;
      threads_.emplace_back([this, index] { work(index); });
    }
    job_ = &f;
    jobs_ = n;
    pending_ = n - 1;
    ++generation_;
    lock.unlock();
    start_.notify_all();
    f(0);
    lock.lock();
    done_.wait(lock, [this] { return pending_ == 0; });
    job_ = nullptr;
    return true;
  }

  ~WorkerPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    start_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

 private:
  WorkerPool() = default;

  void work(size_t index) {
    size_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      start_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (index >= jobs_) continue;
      const std::function<void(size_t)>* job = job_;
      lock.unlock();
      (*job)(index);
      lock.lock();
      if (--pending_ == 0) done_.notify_one();
    }
  }

  std::mutex run_mutex_, mutex_;
  std::condition_variable start_, done_;
  std::vector<std::thread> threads_;
  const std::function<void(size_t)>* job_ = nullptr;
  size_t jobs_ = 0, pending_ = 0, generation_ = 0;
  bool stop_ = false;
};

}  // namespace

void parallel_for(size_t n, const std::function<void(size_t)>& f) {
  std::vector<std::exception_ptr> errors(n);
  auto run = [&](size_t g) {
    try {
      f(g);
    } catch (...) {
      errors[g] = std::current_exception();
    }
  };
  if (n <= 1 || !WorkerPool::instance().try_run(n, run)) {
    std::vector<std::thread> workers;
    workers.reserve(n > 0 ? n - 1 : 0);
    for (size_t g = 1; g < n; ++g) workers.emplace_back(run, g);
    if (n > 0) run(0);
    for (std::thread& t : workers) t.join();
  }
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace dkp::platform
